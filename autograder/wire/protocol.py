"""The typed protocol between the grader and its child process (:mod:`autograder.child.harness`).

The grader sends one :class:`Request`, pickled on the child's standard input in its
:meth:`Request.to_dict` form (the sandbox reads the cases' ids and inputs for their time
budgets). The child answers with records on the private channel (:mod:`autograder.wire.channel`):
a JSON header whose ``type`` names the record's kind, plus named arrays. Each kind is a
dataclass below with one :meth:`~Record.to_header` (the child builds its records through it)
and one ``from_header`` (the grader reads them through it, via :func:`parse`).

Rejected as before: a frame the channel cannot read ends the child's records
(:class:`~autograder.wire.channel.ChannelError`, read in the sandbox); a record of an unknown kind
or whose fields do not fit its kind (missing, or of the wrong JSON type) makes :func:`parse`
raise :class:`ProtocolError`, and :class:`Received` keeps it only as :class:`Rejected` (so a
malformed ``case`` record makes its case an error, never the grader's crash).

The records of one child, in order: ``device`` (GPU children), ``hello``, ``imported`` (or an
``error`` of phase ``environment``, ``import`` or ``contract``, and nothing after it),
``compiled``, then per case ``start`` and ``case`` or ``error`` (phase ``run``), ``kernel``
(GPU), ``start`` and ``instrumented`` (simulator), ``start``, ``ready`` and ``timing`` (timing
child), ``done``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import ClassVar, TypeVar

import numpy as np

from autograder.wire.channel import ChannelError
from autograder.wire.contract import Contract

PHASES = ("environment", "import", "contract", "compile", "run", "instrument", "timing")


class ProtocolError(ChannelError):
    """A record of an unknown kind, or whose fields do not fit its kind."""


# --- the request (grader → child) ---------------------------------------------------------------

@dataclass
class CaseRequest:
    """One case for the child: ``id`` (the case's index), ``params`` (sizes), ``inputs`` (NumPy
    arrays by argument name), ``outputs`` (name → (shape expressions, dtype string), see
    :meth:`autograder.exercises.base.Exercise.outputs`); for an instrumented launch of a
    graded case, ``max_blocks`` (blocks run) and ``block_draw`` (in [0, 1): which block is
    sampled beside the edge blocks, :func:`autograder.child.cases.sampled_blocks`)."""

    id: int | str
    params: dict
    inputs: dict
    outputs: dict
    max_blocks: int | None = None
    block_draw: float | None = None

    def to_dict(self) -> dict:
        d = {"id": self.id, "params": self.params, "inputs": self.inputs, "outputs": self.outputs}
        if self.max_blocks is not None:
            d["max_blocks"] = self.max_blocks
        if self.block_draw is not None:
            d["block_draw"] = self.block_draw
        return d

    @classmethod
    def from_dict(cls, d: dict) -> CaseRequest:
        return cls(d["id"], d["params"], d["inputs"], d["outputs"], d.get("max_blocks"),
                   d.get("block_draw"))


@dataclass
class TimingRequest:
    """The timing phase: ``params`` (the size), ``input_specs`` (name → (shape, dtype string);
    the child fills them on the GPU), ``outputs`` (as :class:`CaseRequest`), the instructor
    solution's ``solution_path`` (a name) and ``solution_source`` (its text: the sandbox shows
    no solution), ``min_rounds`` and ``budget_s`` (seconds) of sampling, and the ratios for full
    and no points (``full_ratio``, ``zero_ratio``: sampling stops once the points are settled,
    :func:`autograder.timing.measure.settled`; None: at 1 % precision only), and ``input_seed``, which
    the inputs' values are hashed from (drawn from the grading's secret seed, so no submission
    can carry answers for them); ``input_ranges``: name → ``[low, high)`` of each input's
    values (:meth:`autograder.exercises.base.Timing.input_range`); ``more_solutions``: the
    instructor's other references, ``[[path, text], ...]`` (the kernel with run-time loop
    bounds): the child times the student against the fastest of all of them."""

    params: dict
    input_specs: dict
    outputs: dict
    solution_path: str
    solution_source: str | None
    min_rounds: int
    budget_s: float
    full_ratio: float | None = None
    zero_ratio: float | None = None
    input_seed: int = 0
    input_ranges: dict | None = None
    more_solutions: list | None = None
    #: The host's compiled timing kernels the grader verified (key → cubin entry bytes,
    #: :mod:`autograder.host.kernel_cache`), added by :func:`autograder.sandbox.run.run_child`.
    kernels: dict | None = None

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> TimingRequest:
        return cls(**{f.name: d.get(f.name) for f in fields(cls)})


@dataclass
class Request:
    """What one child does. ``backend``: ``gpu``, ``sim`` or ``compile``; ``phases``: some of
    ``compile``, ``run``, ``instrument``, ``time``; ``source_path`` names the submission and
    ``source_text`` is what runs (a sibling child cannot swap the file); ``contract``: the
    exercise's :class:`~autograder.wire.contract.Contract` (plain data in :meth:`to_dict`,
    rebuilt by :meth:`from_dict`); ``diagnose``: the first instrumented run's
    case (a graded case, :func:`autograder.grading.plan.evidence_cases`); ``lineinfo``: compile
    with line info (sanitizer runs); ``await_go``: a GPU child says ``ready`` before its first
    GPU work and waits for the grader's go byte; ``diagnose_more``: the other instrumented
    runs' cases, run after ``diagnose``, each with its own ``start`` and ``instrumented``
    records."""

    backend: str
    phases: list
    source_path: str
    source_text: str
    contract: Contract
    cases: list = field(default_factory=list)
    timing: TimingRequest | None = None
    diagnose: CaseRequest | None = None
    lineinfo: bool = False
    await_go: bool = False
    diagnose_more: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The form the sandbox pickles to the child (plain dicts, lists and arrays)."""
        return {"backend": self.backend, "phases": list(self.phases),
                "source_path": self.source_path, "source_text": self.source_text,
                "contract": self.contract.to_dict(),
                "cases": [c.to_dict() for c in self.cases],
                "timing": self.timing.to_dict() if self.timing else None,
                "diagnose": self.diagnose.to_dict() if self.diagnose else None,
                "lineinfo": self.lineinfo, "await_go": self.await_go,
                "diagnose_more": [c.to_dict() for c in self.diagnose_more]}

    @classmethod
    def from_dict(cls, d: dict) -> Request:
        return cls(d["backend"], list(d["phases"]), d["source_path"], d.get("source_text"),
                   Contract.from_dict(d["contract"]), [CaseRequest.from_dict(c) for c in d.get("cases") or ()],
                   TimingRequest.from_dict(d["timing"]) if d.get("timing") else None,
                   CaseRequest.from_dict(d["diagnose"]) if d.get("diagnose") else None,
                   bool(d.get("lineinfo")), bool(d.get("await_go")),
                   [CaseRequest.from_dict(c) for c in d.get("diagnose_more") or ()])


# --- checking a header's fields -------------------------------------------------------------------

def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _id(v) -> bool:
    return _int(v) or isinstance(v, str)


def _nums(v) -> bool:
    return isinstance(v, (list, tuple)) and all(_num(x) for x in v)


def _constants(v) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and _int(x) for k, x in v.items())


def _skipped(v) -> bool:
    return isinstance(v, (list, tuple)) and all(
        isinstance(i, (list, tuple)) and len(i) == 2 and _int(i[0]) and isinstance(i[1], str)
        for i in v)


def _launch_checks(v) -> bool:
    return isinstance(v, (list, tuple)) and all(
        isinstance(entry, (list, tuple)) and all(_nums(row) for row in entry) for entry in v)


def _bindings(v) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str)
                                       for k, x in v.items())


def _is(kind: type):
    return lambda v: isinstance(v, kind)


_REQUIRED = object()


def _get(header: dict, name: str, ok, default=_REQUIRED):
    """``header[name]`` if ``ok(value)``; ``default`` when missing or null (if given)."""
    value = header.get(name)
    if value is None:
        if default is _REQUIRED:
            raise ProtocolError(f"{header.get('type')} record without {name}")
        return default
    if not ok(value):
        raise ProtocolError(f"{header.get('type')} record: {name} is {type(value).__name__}")
    return value


# --- the records (child → grader) ---------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Record:
    """Base of every record. ``arrived``: seconds from the child's spawn to the record's
    arrival, stamped by the sandbox (``_arrived``); None in the child."""

    TYPE: ClassVar[str] = ""
    arrived: float | None = None

    def to_header(self) -> dict:
        """The JSON header the child sends: ``type`` and every field but ``arrived``, None
        fields left out."""
        header = {"type": self.TYPE}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name not in ("arrived", "outputs") and value is not None:
                header[f.name] = value
        return header

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays sent with the header (a ``case`` record's outputs)."""
        return {}


def _stamp(header: dict) -> dict:
    arrived = header.get("_arrived")
    return {"arrived": float(arrived) if _num(arrived) else None}


@dataclass(frozen=True)
class Device(Record):
    """A GPU child's first record: the GPU's ``name``, ``compute_capability`` [major, minor]
    and the driver's limits (shared memory in bytes, 32-bit registers; None: this driver lacks
    the attribute, left out of the header)."""

    TYPE = "device"
    name: str
    compute_capability: list | None = None
    multiprocessors: int | None = None
    max_threads_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    shared_per_sm: int | None = None
    registers_per_sm: int | None = None
    max_threads_per_block: int | None = None
    shared_per_block: int | None = None
    registers_per_block: int | None = None
    reserved_shared_per_block: int | None = None

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Device:
        limits = {f.name: _get(h, f.name, _int, None) for f in fields(cls)
                  if f.name not in ("name", "compute_capability", "arrived")}
        cc = _get(h, "compute_capability", lambda v: _nums(v) and len(v) == 2, None)
        return cls(_get(h, "name", _is(str)), cc, **limits, **_stamp(h))


@dataclass(frozen=True)
class Hello(Record):
    """Sent before any student code exists: the child's ``pid`` and ``packages``
    (:func:`autograder.host.environment.package_facts`)."""

    TYPE = "hello"
    pid: int | None = None
    packages: dict | None = None

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Hello:
        return cls(_get(h, "pid", _int, None), _get(h, "packages", _is(dict), None), **_stamp(h))


@dataclass(frozen=True)
class Error(Record):
    """Something failed in ``phase`` (:data:`PHASES`): ``message`` (exception type and text),
    ``lineno`` (the submission's line, if known), ``id`` (the case, phase ``run``), ``fatal``
    (phase ``run``: the GPU context is lost, no case follows), ``skipped`` (phase
    ``contract``: as :class:`Imported`), ``finding`` (phase ``run``: an exercise driver's check
    of the kernel's behaviour failed, e.g. a grid barrier that let a thread through early: the
    case failed, the kernel raised nothing; see :func:`autograder.child.channel.is_finding`)."""

    TYPE = "error"
    phase: str
    message: str
    lineno: int | None = None
    id: int | str | None = None
    fatal: bool | None = None
    skipped: list | None = None
    finding: bool | None = None

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Error:
        return cls(_get(h, "phase", lambda v: v in PHASES), _get(h, "message", _is(str)),
                   _get(h, "lineno", _int, None), _get(h, "id", _id, None),
                   _get(h, "fatal", _is(bool), None), _get(h, "skipped", _skipped, None),
                   _get(h, "finding", _is(bool), None), **_stamp(h))


@dataclass(frozen=True)
class Imported(Record):
    """The submission's definitions ran and fit the contract: its ``constants`` (name → int),
    the top-level statements ``skipped`` ([line, reason] pairs, at most 50) and the
    ``bindings`` of its namespace (name → text, :func:`autograder.source.definitions.bindings`; None
    from a child that did not send them)."""

    TYPE = "imported"
    constants: dict
    skipped: list = field(default_factory=list)
    bindings: dict | None = None

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Imported:
        return cls(_get(h, "constants", _constants), _get(h, "skipped", _skipped, []),
                   _get(h, "bindings", _bindings, None), **_stamp(h))


@dataclass(frozen=True)
class Compiled(Record):
    """The kernel's ``ptx`` (compiled for a real GPU, line info on; cut at 4 MiB)."""

    TYPE = "compiled"
    ptx: str

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Compiled:
        return cls(_get(h, "ptx", _is(str)), **_stamp(h))


@dataclass(frozen=True)
class Start(Record):
    """A phase's deadline starts: ``id`` is a case id, ``"instrument"`` or ``"timing"``."""

    TYPE = "start"
    id: int | str

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Start:
        return cls(_get(h, "id", _id), **_stamp(h))


@dataclass(frozen=True)
class CaseResult(Record):
    """A case's raw outputs. Kernel exercises: ``outputs``, the guarded output buffers by name
    (sent as arrays). Function exercises: the ``value`` the student's function returned. Never
    an expected value: the child does not know one, and the grader judges."""

    TYPE = "case"
    id: int | str
    outputs: dict = field(default_factory=dict)
    value: int | float | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        return dict(self.outputs)

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> CaseResult:
        arrays = arrays or {}
        if not all(isinstance(a, np.ndarray) for a in arrays.values()):
            raise ProtocolError("case record: an output is not an array")
        value = _get(h, "value", _num, None)
        if value is None and not arrays:
            raise ProtocolError("case record without outputs or value")
        return cls(_get(h, "id", _id), dict(arrays), value, **_stamp(h))


@dataclass(frozen=True)
class Kernel(Record):
    """Numba's counts for the kernel that ran on the GPU: ``regs_per_thread``, ``shared_bytes``
    (static shared memory per block), ``local_bytes`` per thread, ``max_threads_per_block``."""

    TYPE = "kernel"
    regs_per_thread: int
    shared_bytes: int
    local_bytes: int | None = None
    max_threads_per_block: int | None = None

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Kernel:
        return cls(_get(h, "regs_per_thread", _int), _get(h, "shared_bytes", _int),
                   _get(h, "local_bytes", _int, None), _get(h, "max_threads_per_block", _int,
                                                            None), **_stamp(h))


@dataclass(frozen=True)
class Instrumented(Record):
    """The instrumented simulator launch's ``report`` (:mod:`autograder.instrument`)."""

    TYPE = "instrumented"
    report: dict

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Instrumented:
        return cls(_get(h, "report", _is(dict)), **_stamp(h))


@dataclass(frozen=True)
class Ready(Record):
    """A GPU child compiled what it needs and is about to use the GPU (its cases, or the
    timing's inputs, warm-up and measurement): it waits for the grader's go byte."""

    TYPE = "ready"

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Ready:
        return cls(**_stamp(h))


@dataclass(frozen=True)
class TimingSamples(Record):
    """Raw timing samples in milliseconds: the student's kernel and the instructor's
    (interleaved), the instructor's against itself (``self_a_ms``, ``self_b_ms``: the GPU's
    self-check); ``copies`` of the inputs rotated; ``seconds`` the sampling took;
    ``instructor_cached``: the instructor's kernel came from the host's cache of compiled
    kernels (:mod:`autograder.host.kernel_cache`) rather than being compiled in the child;
    ``checks``: per timed round, per output, the raw numbers of the student's launch against the
    instructor's (:data:`autograder.timing.outputs.FIELDS`; None: not checked, which the grader
    does not accept); ``retaken``: samples taken again, disturbed by other work
    (:func:`autograder.timing.measure.disturbed`) or enqueued late by the host; ``reference``:
    which instructor kernel was timed and at which constants, against the student's
    (:func:`autograder.child.timing.measure_timing`)."""

    TYPE = "timing"
    student_ms: list
    instructor_ms: list
    self_a_ms: list
    self_b_ms: list
    copies: int | None = None
    seconds: float | None = None
    instructor_cached: bool | None = None
    checks: list | None = None
    retaken: int | None = None
    reference: dict | None = None

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> TimingSamples:
        return cls(*(_get(h, n, _nums) for n in ("student_ms", "instructor_ms", "self_a_ms",
                                                  "self_b_ms")),
                   _get(h, "copies", _int, None), _get(h, "seconds", _num, None),
                   _get(h, "instructor_cached", _is(bool), None),
                   _get(h, "checks", _launch_checks, None), _get(h, "retaken", _int, None),
                   _get(h, "reference", _is(dict), None), **_stamp(h))


@dataclass(frozen=True)
class Done(Record):
    """The child's last record: everything asked was done."""

    TYPE = "done"

    @classmethod
    def from_header(cls, h: dict, arrays=None) -> Done:
        return cls(**_stamp(h))


KINDS: dict[str, type[Record]] = {k.TYPE: k for k in (
    Device, Hello, Error, Imported, Compiled, Start, CaseResult, Kernel, Instrumented, Ready,
    TimingSamples, Done)}


@dataclass(frozen=True)
class Rejected(Record):
    """Where :class:`Received` met a record :func:`parse` rejected: its ``kind`` (the header's
    ``type``), its case ``id`` if it named one, and ``reason``. Grader-side only."""

    kind: object
    id: int | str | None
    reason: str


def parse(header, arrays=None) -> Record:
    """The record a header (and its arrays) holds. Raises :class:`ProtocolError` for a header
    that is not a dict, of an unknown ``type``, or whose fields do not fit its kind."""
    if not isinstance(header, dict):
        raise ProtocolError("a record header is not an object")
    kind = KINDS.get(header.get("type")) if isinstance(header.get("type"), str) else None
    if kind is None:
        raise ProtocolError(f"unknown record type {header.get('type')!r:.40}")
    return kind.from_header(header, arrays)


R = TypeVar("R", bound=Record)


class Received:
    """One child's records (``(header, arrays)`` pairs, as the sandbox collected them), parsed:
    ``records`` in arrival order, each rejected one as :class:`Rejected`."""

    def __init__(self, pairs):
        self.records: list[Record] = []
        for header, arrays in pairs:
            try:
                self.records.append(parse(header, arrays))
            except ProtocolError as exc:
                cid = header.get("id") if isinstance(header, dict) else None
                self.records.append(Rejected(kind=header.get("type") if isinstance(
                    header, dict) else None, id=cid if _id(cid) else None, reason=str(exc)))

    def all(self, kind: type[R]) -> list[R]:
        """Every record of ``kind``, in arrival order."""
        return [r for r in self.records if type(r) is kind]

    def first(self, kind: type[R]) -> R | None:
        """The first record of ``kind`` (the one that counts), or None."""
        return next((r for r in self.records if type(r) is kind), None)

    def errors(self, *phases: str) -> list[Error]:
        """The ``error`` records of ``phases`` (every phase when none is named)."""
        return [r for r in self.all(Error) if not phases or r.phase in phases]


def received(run) -> Received:
    """:class:`Received` for a :class:`autograder.sandbox.run.ChildRun` (an empty one for None),
    parsed once per run: kept on the run while no record arrives after it (a hook may ask while
    the child still sends). Treat it as read-only: the judges share it."""
    if run is None:
        return Received(())
    kept = getattr(run, "_received", None)
    if kept is not None and kept[0] == len(run.records):
        return kept[1]
    parsed = Received(run.records)
    try:
        run._received = (len(run.records), parsed)
    except AttributeError:  # a run that takes no new attribute: parsed again next time
        pass
    return parsed
