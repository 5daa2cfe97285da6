"""A GPU child is shown its own GPU's device node only, where that GPU can be named for sure
(:mod:`autograder.sandbox.gpu_nodes`), and its ``CUDA_VISIBLE_DEVICES`` names that GPU by UUID."""

from __future__ import annotations

import pytest

from autograder.sandbox import bwrap, gpu_nodes
from autograder.sandbox.limits import child_env

UUIDS = ["GPU-aaaa0000-0000", "GPU-bbbb1111-1111", "GPU-cccc2222-2222"]


def _host(tmp_path, monkeypatch, models=("NVIDIA H200",) * 2, minors=None, nodes=None):
    """A fake driver listing (``/proc/driver/nvidia/gpus``) and ``/dev`` with one GPU per
    model; GPU i on PCI bus 0000:0i:00.0 with minor ``minors[i]`` (default i)."""
    proc, dev = tmp_path / "gpus", tmp_path / "dev"
    (dev / "nvidia-caps").mkdir(parents=True)
    minors = list(range(len(models))) if minors is None else minors
    for i, model in enumerate(models):
        folder = proc / f"0000:0{i}:00.0"
        folder.mkdir(parents=True)
        (folder / "information").write_text(
            f"Model: \t\t {model}\nIRQ:   \t\t 42\nGPU UUID: \t {UUIDS[i]}\n"
            f"Bus Location: \t 0000:0{i}:00.0\nDevice Minor: \t {minors[i]}\n")
    for name in nodes if nodes is not None else [f"nvidia{m}" for m in minors]:
        (dev / name).touch()
    for name in ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"):
        (dev / name).touch()
    monkeypatch.setattr(gpu_nodes, "DRIVER_GPUS", str(proc))
    monkeypatch.setattr(gpu_nodes, "DEV", str(dev))
    return dev


@pytest.mark.parametrize("visible, expected", [
    ("0", 0), ("1", 1), ("1,0", 1), (" 1 ", 1), ("GPU-bbbb", 1), ("GPU-aaaa0000-0000,GPU-b", 0),
    (None, 0),  # unset: CUDA's device 0
    ("2", None), ("", None), ("MIG-abcd", None), ("GPU-zzzz", None),
    ("GPU-", None),  # a prefix of both: not unique
])
def test_own_gpu_follows_the_first_visible_entry(tmp_path, monkeypatch, visible, expected):
    _host(tmp_path, monkeypatch)
    own = gpu_nodes.own_gpu(visible)
    assert (own.uuid if own else None) == (UUIDS[expected] if expected is not None else None)


def test_an_index_counts_only_the_gpus_this_process_can_open(tmp_path, monkeypatch):
    # Slurm's ConstrainDevices: every node exists and /proc lists every GPU, but a cgroup
    # denies the others; CUDA's device 0 is then the first GPU that opens.
    dev = _host(tmp_path, monkeypatch, models=("NVIDIA H200",) * 3)
    monkeypatch.setattr(gpu_nodes, "_opens", lambda node: node != str(dev / "nvidia0"))
    assert gpu_nodes.own_gpu("0").uuid == UUIDS[1]
    assert gpu_nodes.own_gpu(None).uuid == UUIDS[1]
    assert gpu_nodes.own_gpu("1").uuid == UUIDS[2]
    assert gpu_nodes.own_gpu("2") is None
    assert gpu_nodes.own_gpu("GPU-cccc").uuid == UUIDS[2]  # a UUID needs no count


def test_one_gpu_is_left_as_it_is(tmp_path, monkeypatch):
    _host(tmp_path, monkeypatch, models=("NVIDIA H200",))
    assert gpu_nodes.own_gpu("0") is None and gpu_nodes.own_gpu(None) is None


def test_an_index_on_mixed_models_needs_pci_bus_order(tmp_path, monkeypatch):
    # CUDA's default order puts the fastest GPU first, which need not be PCI order.
    _host(tmp_path, monkeypatch, models=("NVIDIA H200", "NVIDIA L4"))
    assert gpu_nodes.own_gpu("1") is None
    assert gpu_nodes.own_gpu("1", order="PCI_BUS_ID").uuid == UUIDS[1]
    assert gpu_nodes.own_gpu("GPU-bbbb").uuid == UUIDS[1]  # a UUID needs no order


def test_minor_numbers_come_from_the_driver_not_the_order(tmp_path, monkeypatch):
    dev = _host(tmp_path, monkeypatch, minors=[1, 0])
    own = gpu_nodes.own_gpu("0")
    assert own.minor == 1
    nodes = gpu_nodes.device_nodes(own)
    assert str(dev / "nvidia1") in nodes and str(dev / "nvidia0") not in nodes


def test_a_gpu_without_its_node_is_not_named(tmp_path, monkeypatch):
    _host(tmp_path, monkeypatch, nodes=["nvidia0"])
    assert gpu_nodes.own_gpu("1") is None
    assert gpu_nodes.own_gpu("0").minor == 0


def test_the_driver_nodes_stay_and_other_gpus_go(tmp_path, monkeypatch):
    dev = _host(tmp_path, monkeypatch, models=("NVIDIA H200",) * 3)
    (dev / "nvidia10").touch()  # a GPU minor with two digits is another GPU, not nvidia1's
    every = gpu_nodes.device_nodes()
    own = gpu_nodes.device_nodes(gpu_nodes.own_gpu("1"))
    shared = {str(dev / n) for n in ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
                                     "nvidia-caps")}
    assert shared <= set(own) and shared <= set(every)
    assert set(every) - set(own) == {str(dev / n) for n in ("nvidia0", "nvidia2", "nvidia10")}
    assert str(dev / "nvidia1") in own


def _binds(cmd):
    return [cmd[i + 1] for i, a in enumerate(cmd) if a == "--dev-bind"]


def test_the_gpu_child_is_shown_its_own_gpu_and_named_by_uuid(tmp_path, monkeypatch):
    dev = _host(tmp_path, monkeypatch)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    binds = _binds(bwrap.arguments(tmp_path, gpu=True))
    assert str(dev / "nvidia1") in binds and str(dev / "nvidia0") not in binds
    assert str(dev / "nvidiactl") in binds
    assert child_env("gpu")["CUDA_VISIBLE_DEVICES"] == UUIDS[1]
    # The simulator's children get no GPU and keep the grader's setting.
    assert child_env("sim")["CUDA_VISIBLE_DEVICES"] == "1"


def test_where_the_gpu_cannot_be_named_every_gpu_is_shown(tmp_path, monkeypatch):
    dev = _host(tmp_path, monkeypatch, models=("NVIDIA H200", "NVIDIA L4"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    binds = _binds(bwrap.arguments(tmp_path, gpu=True))
    assert {str(dev / "nvidia0"), str(dev / "nvidia1")} <= set(binds)
    assert child_env("gpu")["CUDA_VISIBLE_DEVICES"] == "1"
