# SPDX-License-Identifier: BSD-3-Clause
"""Pcap-driven functional tests for sluice.

scapy writes one input pcap per port of a pair; sluice runs on net_pcap
vdevs with --idle-exit; the outputs are read back and compared byte for
byte. Run with Debian's /usr/bin/python3 (scapy comes from Debian).
"""
import os
import re
import select
import shutil
import subprocess
import tempfile
import time

from scapy.utils import PcapWriter, RawPcapReader

SLUICE = os.environ.get("SLUICE", "build/app/sluice")
# The lcore a one-worker sluice runs on: run.py --jobs gives each of its
# runners its own CPU.
LCORE = os.environ.get("SLUICE_PCAP_LCORE", "0")
_seq = [0]


class Run:
    """Outcome of one sluice run: outputs per port, exit status, counters."""

    def __init__(self, rc, stdout, stderr, outs):
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.outs = outs  # list (per port) of list of bytes

    def counter(self, line_prefix, key):
        """A key=value from a line of the exit report that starts with
        line_prefix (e.g. 'totals', 'port 0', 'malformed')."""
        for line in self.stdout.splitlines():
            if line.startswith(line_prefix + " ") or line == line_prefix:
                m = re.search(r"(?:^|\s)" + re.escape(key) + r"=(\d+)", line)
                if m:
                    return int(m.group(1))
                return 0
        raise AssertionError("no line %r in output:\n%s" % (line_prefix, self.stdout))

    def mempool(self):
        m = re.search(r"mempool in_use=(\d+) baseline=(\d+)", self.stdout)
        assert m, "no mempool line:\n" + self.stdout
        return int(m.group(1)), int(m.group(2))


class Output:
    """The merged stdout and stderr of a running sluice, read as it prints,
    for tests that act on a log line (a SIGHUP after boot, the next step
    after a reload). wait_for() never blocks past its deadline: a sluice
    that stays silent fails the test (and is killed) instead of hanging it.
    """

    def __init__(self, p):
        self.p = p
        self.lines = []
        self.pending = b""

    def _split(self):
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            self.lines.append(line.decode(errors="replace") + "\n")

    def wait_for(self, what, count=1, timeout=60):
        """Until count lines hold what."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            self._split()
            if sum(what in l for l in self.lines) >= count:
                return
            ready, _, _ = select.select([self.p.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    break
                self.pending += chunk
        self._split()
        if sum(what in l for l in self.lines) >= count:
            return
        self.p.kill()
        raise AssertionError("no %d x %r in: %s" % (count, what, self.text()[-3000:]))

    def finish(self, timeout=60):
        """Everything, once sluice has exited (after a signal or idle-exit)."""
        out, _ = self.p.communicate(timeout=timeout)
        return self.text() + (out or b"").decode(errors="replace")

    def text(self):
        return "".join(self.lines) + self.pending.decode(errors="replace")


def write_pcap(path, frames):
    """frames: scapy packets or raw bytes. Writes exactly these bytes."""
    w = PcapWriter(path, linktype=1, sync=True)
    # Write the header even when there are no frames.
    w._write_header(None)
    for f in frames:
        w.write(bytes(f))
    w.close()


def read_pcap(path):
    if not os.path.exists(path):
        return []
    return [bytes(data) for data, _meta in RawPcapReader(path)]


def run(inputs, config=None, extra=None, idle_ms=300, pairs=1, timeout=60,
        eal_extra=None, config_file=None, workdir=None):
    """Run sluice on net_pcap ports. inputs: list (one per port) of frame
    lists. config: INI text or None; config_file: a path used as it is
    (so paths inside it resolve next to it). workdir: an existing
    directory that keeps in<p>.pcap / out<p>.pcap after the run (e.g. for
    tshark); the caller removes it. Returns a Run."""
    _seq[0] += 1
    prefix = "pcap%d_%d" % (os.getpid(), _seq[0])
    tmp = workdir if workdir is not None else tempfile.mkdtemp(prefix="sluice-pcap-")
    try:
        nports = 2 * pairs
        args = [SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", LCORE,
                "--file-prefix", prefix,
                "--log-level=lib.*:warning"]
        if eal_extra:
            args += eal_extra
        for p in range(nports):
            fin = os.path.join(tmp, "in%d.pcap" % p)
            write_pcap(fin, inputs[p] if p < len(inputs) else [])
            args += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=%s" %
                     (p, fin, os.path.join(tmp, "out%d.pcap" % p))]
        args += ["--", "--idle-exit", str(idle_ms)]
        if config is not None:
            cpath = os.path.join(tmp, "test.ini")
            with open(cpath, "w") as f:
                f.write(config)
            args += ["-c", cpath]
        if config_file is not None:
            args += ["-c", config_file]
        if extra:
            args += extra
        p = subprocess.run(args, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        outs = [read_pcap(os.path.join(tmp, "out%d.pcap" % i))
                for i in range(nports)]
        return Run(p.returncode, p.stdout, p.stderr, outs)
    finally:
        if workdir is None:
            shutil.rmtree(tmp, ignore_errors=True)
        # The EAL leaves its runtime directory (about 6 MB) behind.
        shutil.rmtree(eal_runtime_dir(prefix), ignore_errors=True)


class Scratch:
    """A scratch directory and an EAL file prefix for one sluice started by
    the test itself: `with Scratch("name") as s:`, then `s.proc = Popen(...)`.
    On the way out a sluice still running is killed, and the directory and
    the EAL's runtime files are removed."""

    def __init__(self, name):
        self.prefix = "%s%d" % (name, os.getpid())
        self.tmp = tempfile.mkdtemp(prefix="sluice-%s-" % name)
        self.proc = None

    def path(self, name):
        return os.path.join(self.tmp, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(eal_runtime_dir(self.prefix), ignore_errors=True)
        return False


def eal_runtime_dir(prefix):
    """Where the EAL keeps the files of --file-prefix prefix."""
    if os.getuid() == 0:
        base = "/var/run"
    else:
        base = os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def run_cli(args, timeout=30):
    p = subprocess.run([SLUICE] + args, capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def assert_config_error(text, want_line, want_key, want_reason, files=None):
    """A configuration (INI text, plus side files such as a subscriber CSV
    written next to it) must be refused before the EAL starts: exit 2 and
    one line naming the file, the line and the key, matching want_reason."""
    tmp = tempfile.mkdtemp(prefix="sluice-badcfg-")
    try:
        for name, body in (files or {}).items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(body)
        path = os.path.join(tmp, "bad.ini")
        with open(path, "w") as f:
            f.write(text)
        rc, _, err = run_cli(["--no-huge", "--", "-c", path])
        assert rc == 2, "exit %d, expected 2: %s" % (rc, err)
        lines = [l for l in err.splitlines() if l.strip()]
        assert len(lines) == 1, "expected one line, got: %r" % err
        assert "%s:%d:" % (path, want_line) in lines[0], lines[0]
        assert want_key in lines[0], lines[0]
        assert re.search(want_reason, lines[0]), lines[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def assert_same(got, want, what):
    """Byte-for-byte, in order."""
    if len(got) != len(want):
        raise AssertionError("%s: %d frames out, %d in" % (what, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            first = next(k for k in range(min(len(g), len(w)) + 1)
                         if k >= min(len(g), len(w)) or g[k] != w[k])
            raise AssertionError("%s: frame %d differs (len %d vs %d, first "
                                 "difference at byte %d)" % (what, i, len(g), len(w), first))


def assert_clean_exit(r):
    assert r.rc == 0, "sluice exited %d\nstdout:\n%s\nstderr:\n%s" % (r.rc, r.stdout, r.stderr)
    in_use, base = r.mempool()
    assert in_use == base, "mbuf leak: in_use=%d baseline=%d" % (in_use, base)
