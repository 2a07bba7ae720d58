"""The `hf` backend: its decode loop, seeded sampling, quantization guard, GGUF conversion.

Fast tests drive the decode loop with a tiny randomly initialised Llama (exact equalities are
properties of the loop, not of the model). Slow tests run the embedded SmolLM2 through the
backend and through the workflow.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from transformers import LlamaConfig, LlamaForCausalLM

from oncoeval.backends import engines
from oncoeval.backends.decoding import DecodeLoop, DecodeParams, Job
from oncoeval.backends.hf import Backend, checkpoint_path, conversion_source, quantization_problem
from oncoeval.config.checks import schema_problems
from oncoeval.core.errors import ConfigError
from oncoeval.core.records import Request, read_responses
from tests.conftest import SHARED_MODEL_STORE, run_snakemake, write_config

EOS = 2


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=300,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=1,
        eos_token_id=EOS,
        pad_token_id=EOS,
    )
    return LlamaForCausalLM(cfg).eval()


def prompts(n: int, seed: int = 1) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(3, 40, (n,), generator=g).tolist()
    return [torch.randint(3, 300, (k,), generator=g).tolist() for k in lengths]


def decode_all(model, jobs: list[Job], batch_size: int, eos=(EOS,)) -> dict:
    loop = DecodeLoop(model, list(eos), EOS, batch_size)
    with torch.inference_mode():
        return {j.key: (tuple(j.tokens), j.finish_reason) for j in loop.run(jobs)}


def greedy_jobs(ps):
    return [
        Job(i, p, DecodeParams(max_new_tokens=8 + 3 * i, repetition_penalty=1.3))
        for i, p in enumerate(ps)
    ]


def test_batched_greedy_equals_one_by_one(tiny):
    ps = prompts(10)
    # Extra stop tokens make rows end at different steps, so rows are refilled mid-batch.
    one = decode_all(tiny, greedy_jobs(ps), 1, eos=range(2, 14))
    assert {reason for _, reason in one.values()} == {"stop", "length"}
    for batch_size in (3, 4, 10):
        assert decode_all(tiny, greedy_jobs(ps), batch_size, eos=range(2, 14)) == one


def test_greedy_loop_matches_transformers_generate(tiny):
    for i, p in enumerate(prompts(4, seed=5)):
        ours = decode_all(
            tiny, [Job(0, p, DecodeParams(max_new_tokens=12, repetition_penalty=1.3))], 1
        )
        with torch.inference_mode():
            out = tiny.generate(
                input_ids=torch.tensor([p]),
                max_new_tokens=12,
                do_sample=False,
                repetition_penalty=1.3,
                pad_token_id=EOS,
            )
        theirs = out[0, len(p) :].tolist()
        theirs = theirs[: theirs.index(EOS)] if EOS in theirs else theirs
        assert list(ours[0][0]) == theirs, f"prompt {i}"


def one_by_one_generate(model, p, max_new_tokens, eos, penalty=None) -> tuple:
    """``transformers.generate`` on one request, cut the way the backend cuts an answer."""
    with torch.inference_mode():
        out = model.generate(
            input_ids=torch.tensor([p]),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            repetition_penalty=penalty or 1.0,
            eos_token_id=list(eos),
            pad_token_id=EOS,
        )
    tokens = out[0, len(p) :].tolist()
    ends = [k for k, t in enumerate(tokens) if t in eos]
    if ends:
        return tuple(tokens[: ends[0]]), "stop"
    return tuple(tokens), "length"


def decode_with(engine, model, jobs, batch_size, eos=(EOS,)) -> dict:
    decoder = engines.Decoder(engine, model, list(eos), EOS, batch_size)
    return {j.key: (tuple(j.tokens), j.finish_reason) for j in decoder.run(jobs)}


ENGINE_CAPS = [8 + 3 * i for i in range(10)]


@pytest.fixture(scope="module")
def one_by_one(tiny):
    """One-by-one ``generate`` answers to ``prompts(10)``, without and with a penalty."""
    eos = range(2, 14)  # extra stop tokens end rows at different steps
    return {
        penalty: {
            i: one_by_one_generate(tiny, p, cap, eos, penalty)
            for i, (p, cap) in enumerate(zip(prompts(10), ENGINE_CAPS, strict=True))
        }
        for penalty in (None, 1.3)
    }


@pytest.mark.parametrize("engine", ["loop", "static", "continuous"])
def test_every_engine_gives_one_by_one_generate_greedy_text(tiny, one_by_one, engine):
    # fp32 on the CPU: batching must not change a greedy token. Prompts of 3-39 tokens are
    # left-padded in a static batch.
    penalties = (None,) if engine == "continuous" else (None, 1.3)
    for penalty in penalties:
        want = one_by_one[penalty]
        assert {reason for _, reason in want.values()} == {"stop", "length"}
        for batch_size in (4, 10):
            jobs = [
                Job(i, p, DecodeParams(max_new_tokens=cap, repetition_penalty=penalty))
                for i, (p, cap) in enumerate(zip(prompts(10), ENGINE_CAPS, strict=True))
            ]
            decoder = engines.Decoder(engine, tiny, list(range(2, 14)), EOS, batch_size)
            got = {j.key: (tuple(j.tokens), j.finish_reason) for j in decoder.run(jobs)}
            assert got == want, f"{engine}, penalty {penalty}, batch {batch_size}"
            assert decoder.stats[engine]["requests"] == len(jobs)


def test_static_batches_do_not_penalise_the_padding(tiny):
    # The pad token is EOS: generate's own penalty would make a padded row less likely to stop.
    pads = torch.tensor([3, 0])
    scores = torch.tensor([[2.0, -1.0, 4.0, 1.0], [2.0, -1.0, 4.0, 1.0]])
    ids = torch.tensor([[2, 2, 2, 3, 1], [0, 3, 3, 1, 2]])
    got = engines._PenaltyBlindToPadding(2.0, pads)(ids, scores.clone())
    # Row 0 saw tokens 3 and 1 (its padding, token 2, is not seen); row 1 saw 0, 3, 1 and 2.
    assert got.tolist() == [[2.0, -2.0, 4.0, 0.5], [1.0, -2.0, 2.0, 0.5]]


def test_engine_choice_by_device_and_setting():
    assert engines.choose(None, "cpu") == engines.choose("auto", "cpu") == "loop"
    assert engines.choose("auto", "cuda") == engines.AUTO["cuda"]
    assert engines.choose("auto", "mps") == "loop"  # a device never measured: the loop
    for name in ("loop", "static", "continuous"):
        assert engines.choose(name, "cpu") == engines.choose(name, "cuda") == name
    with pytest.raises(ValueError, match="engine 'vllm'"):
        engines.choose("vllm", "cpu")


def test_sampled_requests_always_run_in_the_loop_and_penalties_never_in_continuous():
    greedy = DecodeParams()
    penalised = DecodeParams(repetition_penalty=1.2)
    sampled = DecodeParams(temperature=0.7, seed=3)
    for engine in ("loop", "static", "continuous"):
        assert engines.engine_for(engine, sampled) == "loop"
        assert engines.engine_for(engine, greedy) == engine
    assert engines.engine_for("static", penalised) == "static"
    assert engines.engine_for("continuous", penalised) == "static"
    jobs = [Job(0, [5], penalised), Job(1, [5], sampled), Job(2, [5], greedy)]
    shares = engines.assign("continuous", jobs)
    assert [(name, [j.key for j in share]) for name, share in shares.items()] == [
        ("continuous", [2]),
        ("static", [0]),
        ("loop", [1]),
    ]
    # A shaped (constrained) request is decoded in the loop, whatever the engine.
    shaped = Job(3, [5], greedy, constraint=object())
    for engine in ("static", "continuous"):
        assert [j.key for j in engines.assign(engine, [shaped])["loop"]] == [3]


@pytest.mark.parametrize("engine", ["static", "continuous"])
def test_seeded_sample_repeats_under_every_engine(tiny, engine):
    ps = prompts(8, seed=3)
    alone = decode_with("loop", tiny, [sampled_job("s", ps[0], 42)], 1)["s"]
    mates = [Job(f"g{i}", p, DecodeParams(max_new_tokens=10)) for i, p in enumerate(ps[1:5])]
    for batch_size in (2, 6):
        got = decode_with(engine, tiny, [*mates, sampled_job("s", ps[0], 42)], batch_size)
        assert got["s"] == alone, f"{engine}, batch {batch_size}"


def test_engine_is_not_part_of_the_cache_key():
    cfg = {"id": "m", "backend": "hf", "path": "some/model", "dtype": "float32"}
    assert Backend.identity({**cfg, "engine": "static"}) == Backend.identity(cfg)
    assert Backend.config_problems({**cfg, "engine": "static"}) == []
    # An unknown engine is the schema's to refuse (its enum), on the host that builds the DAG.
    config = {"models": [{**cfg, "engine": "fastest"}], "evaluate": ["m"]}
    problems = schema_problems(config)
    assert any(p.startswith("models[0].engine: 'fastest' is not one of") for p in problems)


class _CountHostRoundTrips(TorchDispatchMode):
    """Counts the ops that move a value between host and tensor: on a GPU each is a stall."""

    ROUND_TRIPS = {"lift_fresh", "_local_scalar_dense", "is_nonzero", "item"}

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in self.ROUND_TRIPS:
            self.count += 1
        return func(*args, **(kwargs or {}))


def test_a_decode_step_moves_nothing_between_host_and_device_but_the_tokens(tiny):
    # The chosen tokens are read back once per step (``tolist``, not a dispatched op); any
    # other host value per step (an index tensor, a ``bool()`` of a tensor) would make the count
    # grow with the number of steps.
    counts = []
    for new_tokens in (10, 30):
        loop = DecodeLoop(tiny, [], EOS, 4)
        jobs = [
            Job(i, [5 + i] * 12, DecodeParams(max_new_tokens=new_tokens, repetition_penalty=1.2))
            for i in range(4)
        ]
        with torch.inference_mode(), _CountHostRoundTrips() as mode:
            finished = list(loop.run(jobs))
        assert [len(job.tokens) for job in finished] == [new_tokens] * 4
        counts.append(mode.count)
    assert counts[0] == counts[1]


def sampled_job(key, prompt, seed):
    params = DecodeParams(max_new_tokens=16, temperature=1.0, top_p=0.9, top_k=50, seed=seed)
    return Job(key, prompt, params)


def test_seeded_sample_repeats_whatever_batch_it_lands_in(tiny):
    ps = prompts(8, seed=3)
    alone = decode_all(tiny, [sampled_job("s", ps[0], 42)], 1)["s"]
    # The same request again, now among greedy and other sampled requests, at several widths.
    for batch_size in (2, 5, 9):
        mates = greedy_jobs(ps[1:5]) + [
            sampled_job(f"o{i}", p, 7 + i) for i, p in enumerate(ps[5:])
        ]
        got = decode_all(tiny, [*mates, sampled_job("s", ps[0], 42)], batch_size)
        assert got["s"] == alone, f"batch size {batch_size}"
    assert decode_all(tiny, [sampled_job("s", ps[0], 42)], 1)["s"] == alone


def test_different_seeds_draw_differently(tiny):
    p = prompts(1, seed=4)[0]
    draws = decode_all(tiny, [sampled_job(seed, p, seed) for seed in range(4)], 4)
    assert len({tokens for tokens, _ in draws.values()}) == 4


def test_stop_string_ends_a_row_and_cuts_the_text(tiny):
    p = prompts(1, seed=6)[0]
    free = decode_all(tiny, [Job(0, p, DecodeParams(max_new_tokens=10))], 1)[0][0]
    stop_at = f" {free[3]} "
    loop = DecodeLoop(tiny, [EOS], EOS, 1, decode=lambda ids: " " + " ".join(map(str, ids)) + " ")
    with torch.inference_mode():
        (job,) = loop.run([Job(0, p, DecodeParams(max_new_tokens=10, stop=(stop_at,)))])
    assert job.finish_reason == "stop"
    assert job.tokens == list(free[: free.index(free[3]) + 1])
    assert stop_at not in job.text


def test_the_schema_offers_exactly_the_engines():
    """The schema's enum checks `engine` when the DAG is built (engines.py imports torch)."""
    assert Backend.CONFIG_SCHEMA["properties"]["engine"]["enum"] == list(engines.ENGINES)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a CPU machine")
def test_quantization_is_refused_before_loading_without_cuda(tmp_path):
    cfg = {
        "id": "big",
        "backend": "hf",
        "path": str(tmp_path / "no-such-model"),
        "quantization": "4bit",
    }
    assert "models[big].quantization" in quantization_problem(cfg, cuda_available=False)
    assert quantization_problem(cfg, cuda_available=True) is None
    # The path does not exist: a ConfigError (not an OSError) shows nothing was loaded first.
    with pytest.raises(ConfigError, match=r"models\[big\]\.quantization: 4bit needs .*CUDA"):
        Backend(cfg, threads=1)


# -- the embedded model ------------------------------------------------------------------------

SMOLLM2 = {
    "id": "smollm2",
    "backend": "hf",
    "path": "embedded:smollm2-135m-instruct",
    "dtype": "float32",
    "batch_size": 8,
}
QUESTIONS = [
    "What is radiotherapy? Answer in one sentence.",
    "Name two common side effects of chemotherapy.",
    "What does a pathologist do?",
    "Is a benign tumour cancer?",
]


def request(rid, question, **params) -> Request:
    return Request(rid, [{"role": "user", "content": question}], {"max_new_tokens": 20, **params})


@pytest.fixture(scope="module")
def smollm2():
    os.environ.setdefault("ONCOEVAL_MODEL_STORE", str(SHARED_MODEL_STORE))
    # One thread: on a busy shared machine two OpenMP threads can stall each other badly.
    backend = Backend(SMOLLM2, threads=1)
    yield backend
    backend.close()


def answers(backend, requests, batch_size):
    backend.batch_size = batch_size
    return {r.request_id: r for r in backend.generate(requests)}


@pytest.mark.slow
def test_embedded_model_writes_text_and_batching_changes_nothing(smollm2):
    greedy = [request(f"g{i}", q, repetition_penalty=1.2) for i, q in enumerate(QUESTIONS)]
    sampled = [request("s1", QUESTIONS[0], temperature=0.8, top_p=0.95, seed=11)]
    one_by_one = answers(smollm2, greedy + sampled, 1)
    batched = answers(smollm2, greedy + sampled, 8)
    for rid, resp in one_by_one.items():
        assert resp.error is None
        assert len(resp.text.split()) >= 5, resp.text  # real words, not an empty string
        assert resp.completion_tokens > 0 and resp.prompt_tokens > 10
        assert batched[rid].text == resp.text, rid
    # Seeds: another seed draws another text; the same seed alone repeats the batched draw.
    other = answers(smollm2, [request("s2", QUESTIONS[0], temperature=0.8, top_p=0.95, seed=12)], 1)
    assert other["s2"].text != batched["s1"].text


# -- conversion and the workflow ---------------------------------------------------------------


def test_conversion_is_keyed_by_gguf_hash_and_transformers_version(tmp_path):
    source = conversion_source(SMOLLM2)
    assert source is not None
    name = checkpoint_path(*source, store=tmp_path).name
    import hashlib
    import importlib.metadata

    digest = hashlib.sha256(Path(*source).read_bytes()).hexdigest()
    assert digest[:16] in name
    assert name.endswith(f"-tf{importlib.metadata.version('transformers')}")
    assert conversion_source({**SMOLLM2, "convert_gguf": False}) is None


ADHOC = [
    {
        "request_id": "a1",
        "messages": [{"role": "user", "content": "Name one side effect of breast radiotherapy."}],
        "params": {"max_new_tokens": 12},
    },
    {
        "request_id": "a2#r0",
        "messages": [{"role": "user", "content": "What is a biopsy?"}],
        "params": {"max_new_tokens": 12, "temperature": 0.7, "seed": 3},
    },
]


@pytest.mark.slow
def test_workflow_converts_once_answers_and_reruns_from_cache(workdir, tmp_path):
    store = tmp_path / "store"  # a private store: this run must convert, the next one reuse
    requests = tmp_path / "try.jsonl"
    requests.write_text("".join(json.dumps(r) + "\n" for r in ADHOC))
    config = write_config(
        workdir,
        {
            "models": [{**SMOLLM2, "threads": 1, "batch_size": 4}],
            "evaluate": ["smollm2"],
            "adhoc": {"try": str(requests)},
        },
    )
    env = {"ONCOEVAL_MODEL_STORE": str(store)}
    run_snakemake(workdir, configfile=config, env=env)
    (manifest,) = (workdir / "results" / "models").glob("*.json")
    info = json.loads(manifest.read_text())
    assert info["reused"] is False and Path(info["checkpoint"]).parent == store
    out = workdir / "results" / "adhoc" / "responses" / "smollm2" / "try.jsonl"
    first = read_responses(out)
    assert [r.request_id for r in first] == ["a1", "a2#r0"]
    assert all(r.text and not r.cached and r.error is None for r in first)

    # Rerun the generate job: every answer comes from the cache, no model call.
    run_snakemake(workdir, "--forcerun", "generate", configfile=config, env=env)
    again = read_responses(out)
    assert all(r.cached for r in again)
    assert [r.text for r in again] == [r.text for r in first]
    log = (workdir / "logs" / "adhoc" / "generate" / "smollm2" / "try.log").read_text()
    assert "2 from cache, 0 to generate" in log
    assert "loaded smollm2" not in log

    # A run that needs the conversion again reuses the store's checkpoint; its new manifest
    # (an ancient() input) reruns nothing downstream.
    manifest.unlink()
    answered = out.stat().st_mtime_ns
    target = str(manifest.relative_to(workdir))
    run_snakemake(workdir, "--", target, configfile=config, env=env)
    assert json.loads(manifest.read_text())["reused"] is True
    run_snakemake(workdir, configfile=config, env=env)
    assert out.stat().st_mtime_ns == answered
    assert len([p for p in store.iterdir() if not p.name.startswith(".")]) == 1
