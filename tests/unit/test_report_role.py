"""The report role inside a play that is skipped, as upgrade_path skips the hops after the first in check mode."""

from __future__ import annotations

from playbook_runner import ansible_playbook

SKIPPED_HOP = """
- name: A later hop
  hosts: localhost
  gather_facts: false
  roles:
    - role: skewsafe.kubeadm.report
      vars:
        report_dir: "{{ playbook_dir }}/reports"
        report_hosts: [cp-1, w-1]
"""


def test_a_report_play_skipped_in_check_mode_is_skipped_not_failed(tmp_path):
    """The lab's paths tier, 2026-12-07: upgrade_path --check failed in the second hop's report play with "'item' is
    undefined". Its reach task loops over facts the skipped hop never set, and ansible-core 2.19 templates the
    task's delegate_to before it evaluates the when that would skip it."""
    (tmp_path / "hop.yml").write_text(SKIPPED_HOP)
    (tmp_path / "path.yml").write_text("- ansible.builtin.import_playbook: hop.yml\n  when: not ansible_check_mode\n")
    (tmp_path / "inventory.ini").write_text("localhost ansible_connection=local\n")
    run = ansible_playbook(tmp_path, "-i", "inventory.ini", "path.yml", "--check")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "'item' is undefined" not in run.stdout
    assert not (tmp_path / "reports").exists()
