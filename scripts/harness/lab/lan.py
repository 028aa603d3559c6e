"""The LAN lab (scripts/lab/lan-lab): network namespaces on one bridge, each with its own
D-Bus and avahi-daemon, for discovery over real mDNS without touching the machine's network."""
import os

from harness import ROOT

SCRIPT = ROOT / "scripts/lab/lan-lab"


def available():
    """Why the LAN lab cannot run on this machine, or None when it can."""
    if os.geteuid() != 0:
        return "the LAN lab needs root (network namespaces)"
    for tool in ("/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/unshare"):
        if not os.access(tool, os.X_OK):
            return f"the LAN lab needs {tool} (scripts/setup installs it)"
    return None
