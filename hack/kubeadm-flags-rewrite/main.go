// Runs kubeadm 1.36.5's own WriteKubeletConfigFiles on each case file (a kubeadm-flags.env) in a scratch kubelet
// directory without instance-config.yaml, and prints what kubeadm left there.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/upgrade"
)

func main() {
	for _, path := range os.Args[1:] {
		in, err := os.ReadFile(path)
		if err != nil {
			panic(err)
		}
		dir, _ := os.MkdirTemp("", "kubelet")
		defer os.RemoveAll(dir)
		confDir, _ := os.MkdirTemp("", "kubeconf")
		defer os.RemoveAll(confDir)
		os.WriteFile(filepath.Join(dir, "kubeadm-flags.env"), in, 0o644)
		os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("kind: KubeletConfiguration\n"), 0o644)
		cfg := &kubeadmapi.InitConfiguration{}
		err = upgrade.WriteKubeletConfigFiles(cfg, dir, confDir, "", false, io.Discard)
		out, _ := os.ReadFile(filepath.Join(dir, "kubeadm-flags.env"))
		inst, ierr := os.ReadFile(filepath.Join(dir, "instance-config.yaml"))
		fmt.Printf("=== %s\n--- error\n%v\n--- kubeadm-flags.env\n%s--- instance-config.yaml (%v)\n%s", filepath.Base(path), err, out, ierr, inst)
	}
}
