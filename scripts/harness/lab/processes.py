"""The processes a call is made of: each started and waited for by its PID, with its CPU
time and peak memory kept; and fresh loopback ports for them."""
import os
import signal
import subprocess
import threading
import time


def resident_by_mapping(pid):
    """Resident kB of a running process by what is mapped: each file's path, "[executable]" for
    the program's own file (whatever it is called), or "[anonymous]" for memory of its own (heap,
    stacks, libraries' writable data). {} once it is gone."""
    out, name = {}, None
    try:
        executable = os.readlink(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/smaps") as fh:
            for line in fh:
                head = line.split(maxsplit=5)
                if head and "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                    name = head[5].strip() if len(head) == 6 and head[5].strip().startswith("/") else "[anonymous]"
                    name = "[executable]" if name == executable else name
                elif head and head[0] == "Rss:" and name:
                    out[name] = out.get(name, 0) + int(head[1])
    except (OSError, ValueError):
        return {}
    return out


class Proc:
    """A child process started and waited for by its PID; its rusage is kept."""

    def __init__(self, args, log, **kw):
        self.args = args
        self.log = open(log, "wb")
        kw.setdefault("stdout", self.log)
        self.popen = subprocess.Popen(args, stderr=self.log, **kw)
        self.pid = self.popen.pid
        self.started = time.monotonic()
        self.rusage = None
        self.status = None
        self.wall = None
        # Peak RSS is VmHWM, read from /proc while the process runs: rusage's ru_maxrss is
        # useless here, since exec keeps the high-water mark of the forked Python parent.
        self.vm_hwm_kb = 0
        # What was resident, mapping by mapping, near the peak: taken again whenever the peak
        # has grown by 512 kB since the last one, at most once a second.
        self.mappings_kb = {}
        self._watch = threading.Thread(target=self._watch_memory, daemon=True)
        self._watch.start()

    def _watch_memory(self):
        path = f"/proc/{self.pid}/status"
        mapped_at_kb, mapped_time = 0, 0.0
        while self.status is None:
            try:
                with open(path) as fh:
                    for line in fh:
                        if line.startswith("VmHWM:"):
                            self.vm_hwm_kb = max(self.vm_hwm_kb, int(line.split()[1]))
                            break
            except (OSError, ValueError):
                return
            if self.vm_hwm_kb >= mapped_at_kb + 512 and time.monotonic() >= mapped_time + 1.0:
                mappings = resident_by_mapping(self.pid)
                if mappings:
                    self.mappings_kb, mapped_at_kb, mapped_time = mappings, self.vm_hwm_kb, time.monotonic()
            time.sleep(0.05)

    def poll(self):
        """The exit code if the process has ended (reaping it, rusage kept), else None."""
        if self.status is not None:
            return self.popen.returncode
        try:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            # Reaped elsewhere (subprocess's own poll): its exit code is all there is.
            self.status = self.popen.returncode if self.popen.returncode is not None else -1
            self.wall = time.monotonic() - self.started
            self.log.close()
            return self.popen.returncode
        if pid != self.pid:
            return None
        self.status, self.rusage = status, ru
        self.wall = time.monotonic() - self.started
        self.popen.returncode = os.waitstatus_to_exitcode(status)
        self.log.close()
        return self.popen.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            code = self.poll()
            if self.status is not None:
                return code
            if deadline is not None and time.monotonic() > deadline:
                self.stop()
                deadline = None
            time.sleep(0.02)

    def interrupt(self):
        self._signal(signal.SIGINT)

    def stop(self):
        self._signal(signal.SIGKILL)

    def _signal(self, number):
        if self.status is None:
            try:
                os.kill(self.pid, number)
            except ProcessLookupError:
                pass

    @property
    def cpu_seconds(self):
        """NaN for a process reaped by someone else: its rusage is gone with it."""
        if self.rusage is None:
            return float("nan")
        return self.rusage.ru_utime + self.rusage.ru_stime

    @property
    def max_rss_mb(self):
        return self.vm_hwm_kb / 1024.0


class Ports:
    """Fresh loopback ports for every call, so no stray packet of one call reaches the next.
    Each port handed out is free on 127.0.0.1 and so is the one after it (RTP tools such as
    trx's take port + 1 for RTCP); ports in use by anything else are skipped."""

    def __init__(self, base):
        self.next = base

    @staticmethod
    def _free(port):
        import socket
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", port))
                return True
            except OSError:
                return False

    def take(self, n):
        out = []
        while len(out) < n:
            p = self.next
            self.next += 2
            if self._free(p) and self._free(p + 1):
                out.append(p)
        return out


def stop_all(procs, grace=3.0):
    """Interrupts every process, then waits for each until `grace` seconds are over in all."""
    for p in procs:
        p.interrupt()
    deadline = time.monotonic() + grace
    for p in procs:
        p.wait(timeout=max(0.1, deadline - time.monotonic()))
