"""The typed protocol between grader and child (autograder.wire.protocol): every record kind survives
the channel's framing unchanged, and a record of an unknown kind or with fields that do not fit
its kind is rejected, so the grader judges it an error instead of crashing. No child process."""

from __future__ import annotations

import io
import json
import pickle
from dataclasses import fields, replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from autograder import exercises
from autograder.judge import collect as judge
from autograder.judge.inputs import Children, Grading
from autograder.grading import plan
from autograder.wire import protocol
from autograder.wire.channel import encode, read_record
from autograder.wire.contract import Constant, Contract, ContractFormatError
from autograder.wire.protocol import (CaseResult, Compiled, Device, Done, Error, Hello, Imported,
                                 Instrumented, Kernel, ProtocolError, Ready, Received, Rejected,
                                 Start, TimingSamples, parse)
from autograder.wire.results import Status
from autograder.sandbox.run import ChildRun
from autograder.source.submission import load_source

EXAMPLES = [
    Device("NVIDIA H200", [9, 0], multiprocessors=132, max_threads_per_sm=2048),
    Hello(1234, {"numpy": {"version": "2.4.6", "path": "/x/numpy"}, "numba": None}),
    Error("run", "IndexError: index 16 is out of bounds", 12, id=3, fatal=False),
    Error("contract", "the submission does not define TILE_WIDTH", skipped=[[4, "a call"]]),
    Imported({"TILE_WIDTH": 16}, [[7, "an if block"]]),
    Compiled(".version 8.4\n.target sm_90\n"),
    Start(0), Start("timing"),
    CaseResult(2, {"C": np.arange(12, dtype=np.float32)}),
    CaseResult(1, value=8),
    Kernel(32, 2048, 0, 1024),
    Instrumented({"races": [], "blocks_run": 4}),
    Ready(),
    TimingSamples([1.0, 1.1], [0.9, 1.0], [1.0, 1.0], [1.0, 1.01], 3, 2.5),
    Done(),
]


def _through_channel(record):
    stream = io.BytesIO(encode(record.to_header(), record.arrays()))
    header, arrays = read_record(stream)
    return parse(header, arrays)


@pytest.mark.parametrize("record", EXAMPLES, ids=lambda r: r.TYPE)
def test_every_kind_survives_the_channel(record):
    back = _through_channel(record)
    assert type(back) is type(record)
    for name in record.__dataclass_fields__:
        want, got = getattr(record, name), getattr(back, name)
        if isinstance(want, dict) and any(isinstance(v, np.ndarray) for v in want.values()):
            assert want.keys() == got.keys()
            assert all(np.array_equal(want[k], got[k]) for k in want)
        else:
            assert got == want, name


def test_a_case_record_carries_only_what_the_student_s_code_produced():
    # A child that adds its own verdict or expected value is not listened to: the grader judges.
    header = {"type": "case", "id": 1, "value": 8, "expected": 8, "passed": True,
              "args": {"threads_per_block": 256}}
    back = parse(header, {})
    assert back == CaseResult(1, value=8)
    assert {f.name for f in fields(CaseResult)} == {"id", "outputs", "value", "arrived"}


def test_every_kind_has_an_example():
    assert {type(r) for r in EXAMPLES} == set(protocol.KINDS.values())


@pytest.mark.parametrize("header, arrays, why", [
    ({"type": "bogus"}, {}, "unknown record type"),
    ("not a dict", {}, "not an object"),
    ({"type": "case", "id": 0}, {}, "without outputs or value"),
    ({"type": "case", "id": 0}, {"C": "not an array"}, "not an array"),
    ({"type": "case", "value": 3}, {}, "without id"),
    ({"type": "case", "id": True, "value": 3}, {}, "id is bool"),
    ({"type": "error", "phase": "lunch", "message": "x"}, {}, "phase is str"),
    ({"type": "error", "phase": "run"}, {}, "without message"),
    ({"type": "imported", "constants": {"TILE_WIDTH": "16"}}, {}, "constants is dict"),
    ({"type": "timing", "student_ms": [1.0]}, {}, "without instructor_ms"),
    ({"type": "compiled", "ptx": 42}, {}, "ptx is int"),
])
def test_records_that_do_not_fit_their_kind_are_rejected(header, arrays, why):
    with pytest.raises(ProtocolError, match=why):
        parse(header, arrays)
    (rejected,) = Received([(header, arrays)]).records
    assert type(rejected) is Rejected


def test_the_sandbox_s_arrival_stamp_is_read():
    rx = Received([({"type": "hello", "pid": 1, "_arrived": 0.25}, {})])
    assert rx.first(Hello).arrived == 0.25 and rx.first(Imported) is None


def test_a_request_round_trips():
    ex = exercises.get("tiled_matmul")
    cases = plan.make_cases(ex, 3)[:2]
    source = exercises.solution_path(ex)
    wire = plan.request(ex, "sim", ["run", "instrument"], source, cases, None,
                        diagnose=plan.evidence_cases(ex, cases[:1], 3))
    req = protocol.Request.from_dict(wire)
    assert req.phases == ["run", "instrument"] and [c.id for c in req.cases] == [0, 1]
    assert req.diagnose.id == 0 and req.diagnose.max_blocks == ex.diagnose.max_blocks
    assert req.diagnose.block_draw == plan.block_draw(3, 0)
    assert np.array_equal(req.cases[1].inputs["A"], cases[1].inputs["A"])
    assert req.source_text == source.read_text(encoding="utf-8")
    again = req.to_dict()
    assert again.keys() == wire.keys() and again["cases"][0]["params"] == cases[0].spec.params
    assert req.contract == ex.contract and type(req.contract) is Contract


_names = st.text(st.characters(codec="utf-8"), max_size=12)
_CONTRACTS = st.builds(
    Contract, kernel=_names,
    constants=st.lists(st.builds(Constant, _names, st.integers(), st.integers(), st.booleans()),
                       max_size=3).map(tuple),
    args=st.lists(_names, max_size=4).map(tuple), signature=st.lists(_names, max_size=4).map(tuple),
    grid=st.lists(_names, max_size=3).map(tuple), block=st.lists(_names, max_size=3).map(tuple),
    checks=st.lists(st.tuples(_names, _names), max_size=2).map(tuple),
    device_function=st.booleans(), driver=st.none() | _names,
    functions=st.lists(_names, max_size=2).map(tuple), zeroed=st.lists(_names, max_size=2).map(tuple),
    driver_root=st.none() | _names)


@given(_CONTRACTS)
def test_a_contract_round_trips_its_plain_form(contract):
    """What the child rebuilds is the grader's contract, field for field, whether the plain form
    came through pickle (the request) or JSON (lists for tuples)."""
    plain = contract.to_dict()
    assert Contract.from_dict(plain) == contract
    assert Contract.from_dict(pickle.loads(pickle.dumps(plain))) == contract
    assert Contract.from_dict(json.loads(json.dumps(plain))) == contract


@pytest.mark.parametrize("name", exercises.names())
def test_every_exercise_s_contract_is_plain_data_that_round_trips(name):
    """Plain data only (JSON takes it): no callable, array or answer can ride along."""
    contract = exercises.get(name).contract
    assert Contract.from_dict(json.loads(json.dumps(contract.to_dict()))) == contract


@pytest.mark.parametrize("change, field", [
    ({"kernal": "k"}, "kernal"), ({"kernel": None}, "kernel"), ({"args": "ab"}, "args"),
    ({"constants": [{"name": "B", "low": 1}]}, "missing"), ({"checks": [["x"]]}, "checks"),
    ({"driver": 3}, "driver"), ({"device_function": 1}, "device_function")])
def test_a_contract_that_does_not_fit_says_which_field(change, field):
    plain = {**exercises.get("block_sum").contract.to_dict(), **change}
    with pytest.raises(ContractFormatError, match=field):
        Contract.from_dict(plain)
    with pytest.raises(ContractFormatError, match="missing.*kernel"):
        Contract.from_dict({k: v for k, v in plain.items() if k != "kernel"})


def test_the_instrumented_runs_cases_round_trip_as_the_graded_cases():
    ex = exercises.get("tiled_matmul")
    cases = plan.make_cases(ex, 3)[:3]
    evidence = plan.evidence_cases(ex, cases, 3)
    wire = plan.request(ex, "sim", ["instrument"], exercises.solution_path(ex), [], None,
                        diagnose=evidence)
    req = protocol.Request.from_dict(wire)
    assert [req.diagnose.id] + [c.id for c in req.diagnose_more] == [0, 1, 2]
    assert [req.diagnose.params] + [c.params for c in req.diagnose_more] == \
        [c.spec.params for c in cases]
    assert np.array_equal(req.diagnose_more[0].inputs["B"], cases[1].inputs["B"])
    assert [c.block_draw for c in req.diagnose_more] == [e.block_draw for e in evidence[1:]]


def test_a_malformed_case_record_is_that_case_s_error_not_a_crash():
    """The first record per case counts; a rejected one makes its case an error, and the
    other cases are judged as usual."""
    ex = exercises.get("tiled_matmul")
    cases = [c for c in plan.make_cases(ex, 7) if c.spec.params["width"] <= 17]
    run = ChildRun(records=[({"type": "imported", "constants": {"TILE_WIDTH": 16}}, {})])
    for c in cases:
        out = ex.reference(c.inputs, {**c.spec.params, "TILE_WIDTH": 16})["C"]
        arrays = {"C": out.astype(np.float32).reshape(-1)} if c is not cases[0] else {}
        run.records.append(({"type": "case", "id": c.id}, arrays))
    run.records.append(({"type": "case", "id": cases[0].id}, {"C": np.zeros(1)}))  # too late
    run.records.append(({"type": "done"}, {}))
    source = load_source(exercises.solution_path(ex))
    grading = Grading(exercise=replace(ex, concept=None, timing=None), source=source,
                      backend="sim", cases=cases)
    tests = judge.collect(grading, Children(run=run))
    assert tests[0].status is Status.ERROR
    assert "malformed result (case record without outputs or value)" in tests[0].message
    assert all(t.status is Status.PASSED for t in tests[1:]) and len(tests) == len(cases)


def test_a_runs_records_are_parsed_once_until_another_arrives(monkeypatch):
    """``received(run)`` parses a child's records once for all its judges (issue 23: 15 call
    sites parsed them again), and again when a record has arrived since."""
    from autograder.wire import protocol
    from autograder.sandbox.run import ChildRun

    parsed = []
    real = protocol.parse
    monkeypatch.setattr(protocol, "parse", lambda h, a: parsed.append(h) or real(h, a))
    run = ChildRun(records=[(protocol.Start(0).to_header(), {})])
    first = protocol.received(run)
    assert protocol.received(run) is first and len(parsed) == 1
    run.records.append((protocol.Start("timing").to_header(), {}))
    later = protocol.received(run)
    assert later is not first and [r.id for r in later.all(protocol.Start)] == [0, "timing"]
    assert protocol.received(None).records == []
