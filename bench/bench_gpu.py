"""GPU throughput (issue #8, item 6): an 8B-class model through the `hf` backend's decode loop.

Runs on a CUDA machine with only torch and transformers installed, offline and without weights:
the model is a randomly initialised Llama-3-8B-shaped ``LlamaForCausalLM`` built from a config
in bf16 (random weights cost the same FLOPs and bytes as real ones; the text is noise). Prompts
are random token ids of 120-180 tokens; every request asks for ``NEW`` new tokens.

Measured side by side (tokens/s = new tokens / wall time, prefill included):

- ``hf_generate``: ``transformers.generate`` one request at a time (the identity reference);
- ``backend``: ``oncoeval.backends.decoding.DecodeLoop`` (the backend's own loop) by batch size;
- ``engine_NAME`` (issue #21): at ``ONCOEVAL_GPU_ENGINE_BATCHES`` (32,64,128), in each of
  ``ONCOEVAL_GPU_DTYPES`` (bf16,nf4; nf4 needs bitsandbytes), with equal caps and with mixed
  caps (``_mixed``), every engine of the ``hf`` backend side by side: ``loop``, ``static``
  (``generate`` sorted static batches), ``continuous`` (transformers' continuous batching) and
  ``auto`` (what the backend runs by default here). ``identical`` is the share of the first 8
  requests whose tokens equal one-by-one ``generate``'s (bf16 batching moves near-ties);
- ``rule``: the ``generate`` rule's code (``run_generate``: load, cache, files) at batch 64 in
  bf16, through a word-level tokenizer written for the random model;
- ``vllm``: vLLM's offline engine on the same token ids, and the ``vllm`` backend around it
  (skipped without vllm).

- ``*_mixed`` rows: at batch 32 and 64, the same prompts with caps of 1/8, 1/4, 1/2 and all of
  ``NEW`` new tokens in turn (answers that end at different points): static ``generate``
  batches run to their longest cap, the loop refills finished rows; only tokens within each
  request's cap count.

Without CUDA the benchmark returns a skip record at once. Settings by environment:
``ONCOEVAL_GPU_BATCHES`` (default 1,8,32,64,128), ``ONCOEVAL_GPU_NEW`` (128),
``ONCOEVAL_GPU_LAYERS`` (32; fewer for a quick smoke run). For a smoke run of this file's code
on a machine without a GPU: ``ONCOEVAL_GPU_DEVICE=cpu ONCOEVAL_GPU_SHAPE=tiny`` (a small Llama,
fp32; its numbers mean nothing).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

BATCHES = [int(b) for b in os.environ.get("ONCOEVAL_GPU_BATCHES", "1,8,32,64,128").split(",")]
ENGINE_BATCHES = [
    int(b) for b in os.environ.get("ONCOEVAL_GPU_ENGINE_BATCHES", "32,64,128").split(",") if b
]
DTYPES = [d for d in os.environ.get("ONCOEVAL_GPU_DTYPES", "bf16,nf4").split(",") if d]
ENGINES = ("loop", "static", "continuous", "auto")
#: Rounds of the engine rows, each in another order of a balanced Latin square (for an even
#: number of engines, n rounds put every engine once in every place and once after every other):
#: one pass in a fixed order cannot tell an engine from its place in the run.
ROUNDS = int(os.environ.get("ONCOEVAL_GPU_ROUNDS", "1"))
#: Caps to run: equal, mixed or both.
CAPS = [c for c in os.environ.get("ONCOEVAL_GPU_CAPS", "equal,mixed").split(",") if c]
N_IDENTITY = 8
NEW = int(os.environ.get("ONCOEVAL_GPU_NEW", "128"))
LAYERS = int(os.environ.get("ONCOEVAL_GPU_LAYERS", "32"))
EOS = 128009  # <|eot_id|> of Llama 3; random weights almost never pick it
DEVICE = os.environ.get("ONCOEVAL_GPU_DEVICE", "cuda")
SHAPE = os.environ.get("ONCOEVAL_GPU_SHAPE", "8b")
ON_CUDA = DEVICE.startswith("cuda")


def llama3_8b_config():
    from transformers import LlamaConfig

    tiny = SHAPE == "tiny"  # a smoke run's model: same code paths, a thousandth of the work
    return LlamaConfig(
        vocab_size=128256,
        hidden_size=256 if tiny else 4096,
        intermediate_size=512 if tiny else 14336,
        num_hidden_layers=LAYERS,
        num_attention_heads=4 if tiny else 32,
        num_key_value_heads=2 if tiny else 8,
        head_dim=64 if tiny else 128,
        max_position_embeddings=8192,
        rope_theta=500000.0,
        rms_norm_eps=1e-5,
        bos_token_id=128000,
        eos_token_id=EOS,
        pad_token_id=EOS,
        tie_word_embeddings=False,
    )


def random_model(config):
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    with torch.device(DEVICE):
        model = AutoModelForCausalLM.from_config(
            config, dtype=torch.bfloat16 if ON_CUDA else torch.float32
        )
    return model.eval()


def prompts(n: int, seed: int = 0) -> list[list[int]]:
    import torch

    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(120, 181, (n,), generator=g).tolist()
    return [torch.randint(1000, 120000, (k,), generator=g).tolist() for k in lengths]


def n_requests(batch_size: int) -> int:
    return max(8, 2 * batch_size)


#: One pool of prompts: a batch of n runs on its first n, so the first N_IDENTITY requests are
#: in every run and can be compared with one-by-one ``generate``.
POOL = prompts(n_requests(max([*BATCHES, *ENGINE_BATCHES, 64])))


def timed(fn, *args) -> tuple[int, float, float]:
    """(new tokens, seconds, peak GPU GB) of ``fn(*args)`` returning new tokens."""
    import torch

    if not ON_CUDA:
        started = time.perf_counter()
        tokens = fn(*args)
        return tokens, time.perf_counter() - started, 0.0
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    tokens = fn(*args)
    torch.cuda.synchronize()
    return tokens, time.perf_counter() - started, torch.cuda.max_memory_allocated() / 2**30


def row(mode: str, batch_size: int, n: int, result, dtype: str = "bf16") -> dict:
    tokens, seconds, peak = result
    out = {
        "mode": mode,
        "dtype": dtype,
        "batch_size": batch_size,
        "requests": n,
        "new_tokens": tokens,
        "seconds": round(seconds, 2),
        "tok_s": round(tokens / seconds, 1),
        "peak_gpu_gb": round(peak, 2),
    }
    print(json.dumps(out), flush=True)
    return out


def mixed_caps(n: int) -> list[int]:
    """Per-request caps of NEW/8, NEW/4, NEW/2 and NEW in turn."""
    return [max(1, NEW >> (3 - i % 4)) for i in range(n)]


def decode_loop(model, batch_size: int, ps: list[list[int]], caps=None) -> int:
    return decode_engine("loop", model, batch_size, ps, caps)


def decode_engine(engine, model, batch_size, ps, caps=None, outputs=None) -> int:
    """New tokens of ``ps`` decoded as the ``hf`` backend does with ``engine`` (``auto``: what
    it picks on this device); ``outputs`` (a dict) gets each request's tokens."""
    from oncoeval.backends.decoding import DecodeParams, Job
    from oncoeval.backends.engines import Decoder, choose

    caps = caps or [NEW] * len(ps)
    name = choose(engine, "cuda" if ON_CUDA else "cpu")
    decoder = Decoder(name, model, [EOS], EOS, batch_size)
    pairs = enumerate(zip(ps, caps, strict=True))
    jobs = [Job(i, p, DecodeParams(max_new_tokens=c)) for i, (p, c) in pairs]
    tokens = 0
    for job in decoder.run(jobs):
        tokens += len(job.tokens)
        if outputs is not None:
            outputs[job.key] = list(job.tokens)
    return tokens


def hf_generate(model, batch_size: int, ps: list[list[int]], caps=None, outputs=None) -> int:
    import torch

    caps = caps or [NEW] * len(ps)
    tokens = 0
    order = sorted(range(len(ps)), key=lambda i: len(ps[i]))
    for start in range(0, len(order), batch_size):
        members = order[start : start + batch_size]
        chunk = [ps[i] for i in members]
        width = max(map(len, chunk))
        longest = max(caps[i] for i in members)
        ids = torch.tensor([[EOS] * (width - len(p)) + p for p in chunk], device=DEVICE)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in chunk], device=DEVICE)
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=longest,
                do_sample=False,
                pad_token_id=EOS,
                eos_token_id=EOS,
            )
        for i, row in zip(members, out[:, width:].tolist(), strict=True):
            row = row[: caps[i]]
            row = row[: row.index(EOS)] if EOS in row else row
            tokens += len(row)
            if outputs is not None:
                outputs[i] = row
    return tokens


def balanced_order(items: list, round_: int) -> list:
    """Row ``round_`` of a Williams design: 0, 1, n-1, 2, n-2, ... shifted by the round."""
    n = len(items)
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    return [items[(i + round_) % n] for i in first]


def engine_rows(model, label: str, reference: dict) -> list[dict]:
    """Every engine at every ENGINE_BATCHES size, equal and mixed caps, side by side; with
    ROUNDS > 1, again in balanced orders (each row says its round and what ran before it)."""
    rows = []
    for batch_size in ENGINE_BATCHES:
        n = n_requests(batch_size)
        ps = POOL[:n]
        for lengths in CAPS:
            caps = None if lengths == "equal" else mixed_caps(n)
            before = None
            for round_ in range(ROUNDS):
                for engine in balanced_order(list(ENGINES), round_):
                    outputs: dict = {}
                    result = timed(decode_engine, engine, model, batch_size, ps, caps, outputs)
                    suffix = "" if lengths == "equal" else "_mixed"
                    r = row(f"engine_{engine}{suffix}", batch_size, n, result, dtype=label)
                    if lengths == "equal":
                        same = sum(outputs.get(i) == reference[i] for i in reference)
                        r["identical"] = round(same / len(reference), 3)
                    if ROUNDS > 1:
                        r["round"], r["after"] = round_, before
                    before = engine
                    rows.append(r)
    return rows


def run(out_dir: Path) -> dict:
    try:
        import torch
    except ImportError:
        return {"skipped": "torch is not installed", "summary": ["skipped: no torch"]}
    if ON_CUDA and not torch.cuda.is_available():
        return {"skipped": "no CUDA device", "summary": ["skipped: no CUDA device here"]}
    import importlib.util

    from oncoeval.backends.engines import choose

    device = torch.cuda.get_device_name(0) if ON_CUDA else f"{DEVICE} (smoke run)"
    rows: list[dict] = []
    notes: list[str] = [f"auto picks {choose('auto', 'cuda' if ON_CUDA else 'cpu')} here"]
    config = llama3_8b_config()
    model = random_model(config)
    warm = prompts(2, seed=99)
    for engine in ENGINES[:3]:  # CUDA kernels, allocator, each engine's first-call costs
        decode_engine(engine, model, 2, warm)

    reference: dict = {}
    ref_result = timed(hf_generate, model, 1, POOL[:N_IDENTITY], None, reference)
    rows.append(row("hf_generate", 1, N_IDENTITY, ref_result, dtype="bf16"))
    for batch_size in [b for b in BATCHES if b not in ENGINE_BATCHES]:
        n = n_requests(batch_size)
        rows.append(row("backend", batch_size, n, timed(decode_loop, model, batch_size, POOL[:n])))
    if "bf16" in DTYPES:
        rows += engine_rows(model, "bf16", reference)

    want_rule = os.environ.get("ONCOEVAL_GPU_RULE", "1") == "1"
    need_disk = want_rule or (
        ON_CUDA and (importlib.util.find_spec("bitsandbytes") or importlib.util.find_spec("vllm"))
    )
    folder = None
    if need_disk:
        folder = Path(tempfile.mkdtemp(prefix="oncoeval-gpu-bench-"))
        model.save_pretrained(folder)
    del model
    if ON_CUDA:
        torch.cuda.empty_cache()

    try:
        if want_rule:
            rows += run_rule(folder, notes)
        if not ON_CUDA:
            notes.append("NF4 and vLLM skipped: not on CUDA")
        else:
            if "nf4" in DTYPES and importlib.util.find_spec("bitsandbytes"):
                rows += run_4bit(folder, reference)
            elif "nf4" in DTYPES:
                notes.append("NF4 skipped: bitsandbytes is not installed")
            if importlib.util.find_spec("vllm"):
                rows += run_vllm(folder)
            else:
                notes.append("vLLM skipped: vllm is not installed")
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    return {
        "device": device,
        "date": time.strftime("%Y-%m-%d"),
        "model": f"random Llama-3-8B shape ({LAYERS} layers), bf16",
        "new_tokens": NEW,
        "rows": rows,
        "notes": notes,
        "summary": summarise(rows, device, notes),
    }


def run_4bit(folder: Path, reference: dict) -> list[dict]:
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    quant = BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
    )
    model = AutoModelForCausalLM.from_pretrained(
        folder, quantization_config=quant, device_map=DEVICE, dtype=torch.bfloat16
    ).eval()
    for engine in ENGINES[:3]:
        decode_engine(engine, model, 2, prompts(2, seed=99))
    nf4_reference: dict = {}
    out = [
        row(
            "hf_generate",
            1,
            N_IDENTITY,
            timed(hf_generate, model, 1, POOL[:N_IDENTITY], None, nf4_reference),
            dtype="nf4",
        )
    ]
    out += engine_rows(model, "nf4", nf4_reference)
    del model
    torch.cuda.empty_cache()
    return out


def word_tokenizer(folder: Path) -> None:
    """A word-level tokenizer with a chat template for the random model (ids 1000-9999)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {f"w{i}": 1000 + i for i in range(9000)}
    vocab.update({"<unk>": 999, "<|eot_id|>": EOS, "<|user|>": 998, "<|assistant|>": 997})
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="<unk>", eos_token="<|eot_id|>", pad_token="<|eot_id|>"
    )
    tokenizer.chat_template = (
        "{% for m in messages %}<|user|> {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    tokenizer.save_pretrained(folder)


def run_rule(folder: Path, notes: list[str]) -> list[dict]:
    """The generate rule's code end to end (load, cache, files), bf16, batch 64, engine auto."""
    try:
        from oncoeval.core.records import Request, write_requests
        from oncoeval.workflow.generate import run_generate
    except ImportError as exc:  # the package's own dependencies may be missing there
        notes.append(f"rule skipped: {exc}")
        return []
    import torch

    word_tokenizer(folder)
    n = n_requests(64)
    words = [" ".join(f"w{t % 9000}" for t in p) for p in POOL[:n]]
    requests = [
        Request(f"q{i}", [{"role": "user", "content": w}], {"max_new_tokens": NEW})
        for i, w in enumerate(words)
    ]
    dtype = "bfloat16" if ON_CUDA else "float32"
    cfg = {"id": "bench8b", "backend": "hf", "path": str(folder), "dtype": dtype}
    cfg.update(batch_size=64, engine="auto")
    with tempfile.TemporaryDirectory() as tmp:
        request_file = Path(tmp) / "bench.jsonl"
        write_requests(request_file, requests)

        def rule() -> int:
            run_generate(
                request_file,
                Path(tmp) / "out.jsonl",
                cfg,
                Path(tmp) / "cache",
                "bench",
                "bench",
                threads=2,
                progress=False,
            )
            lines = (Path(tmp) / "out.jsonl").read_text().splitlines()
            return sum(json.loads(line)["completion_tokens"] or 0 for line in lines)

        out = [row("rule", 64, n, timed(rule), dtype="bf16" if ON_CUDA else "fp32")]
    if ON_CUDA:
        torch.cuda.empty_cache()
    return out


def run_vllm(folder: Path) -> list[dict]:
    from vllm import LLM, SamplingParams

    n = max(BATCHES) * 4
    ps = prompts(n)
    llm = LLM(
        model=str(folder),
        dtype="bfloat16",
        skip_tokenizer_init=True,
        gpu_memory_utilization=0.85,
        max_model_len=1024,
        seed=0,
    )
    params = SamplingParams(max_tokens=NEW, min_tokens=NEW, temperature=0.0, ignore_eos=True)
    inputs = [{"prompt_token_ids": p} for p in ps]
    llm.generate(inputs[:4], params, use_tqdm=False)  # warm-up

    def engine():
        outs = llm.generate(inputs, [params] * len(inputs), use_tqdm=False)
        return sum(len(o.outputs[0].token_ids) for o in outs)

    out = [row("vllm_engine", 0, n, timed(engine))]
    try:
        from oncoeval.backends.vllm_offline import Backend
        from oncoeval.core.records import Request
    except ImportError as exc:  # the package's own dependencies (pandas) may be missing there
        print(json.dumps({"vllm_backend": f"skipped: {exc}"}))
        return out

    backend = Backend.__new__(Backend)  # reuse the engine loaded above
    backend.cfg, backend.model_id, backend.llm = {"id": "bench"}, "bench", llm
    backend.tokenizer = None
    backend._prompt_ids = lambda request: request.meta["ids"]
    requests = [
        Request(f"r{i}", [{"role": "user", "content": ""}], {"max_new_tokens": NEW}, {"ids": p})
        for i, p in enumerate(ps)
    ]

    def through_backend():
        return sum(r.completion_tokens or 0 for r in backend.generate(requests))

    out.append(row("vllm_backend", 0, n, timed(through_backend)))
    return out


def summarise(rows: list[dict], device: str, notes: list[str]) -> list[str]:
    lines = [
        f"{device}; random Llama-3-8B-shaped model ({LAYERS} layers, {SHAPE}), "
        f"{'bf16 / NF4' if ON_CUDA else 'fp32'}; {NEW} new tokens per request (mixed: "
        f"{NEW >> 3}/{NEW >> 2}/{NEW >> 1}/{NEW} in turn); prompts of 120-180 tokens.",
        "",
        "| mode | dtype | batch | requests | tok/s | identical to one-by-one | peak GPU GB |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['mode']} | {r['dtype']} | {r['batch_size'] or 'engine'} | {r['requests']} "
        f"| {r['tok_s']} | {r.get('identical', '')} | {r['peak_gpu_gb']} |"
        for r in rows
    ]
    lines.append("")
    if ROUNDS > 1:
        lines += rounds_summary(rows)
    by_key = {(r["mode"], r["dtype"], r["batch_size"]): r for r in rows}
    for (mode, dtype, batch_size), r in by_key.items():
        if not mode.startswith("engine_auto"):
            continue
        suffix = mode.removeprefix("engine_auto")
        library = [
            by_key.get((f"engine_{e}{suffix}", dtype, batch_size)) for e in ("static", "continuous")
        ]
        library = [x for x in library if x]
        loop = by_key.get((f"engine_loop{suffix}", dtype, batch_size))
        if library:
            best = max(library, key=lambda x: x["tok_s"])
            lines.append(
                f"{dtype}, batch {batch_size}, {'mixed' if suffix else 'equal'} caps: auto / "
                f"faster library engine ({best['mode'].removeprefix('engine_')}) "
                f"{r['tok_s'] / best['tok_s']:.2f}"
                + (f"; loop / that {loop['tok_s'] / best['tok_s']:.2f}" if loop else "")
            )
    engine = next((r for r in rows if r["mode"] == "vllm_engine"), None)
    wrapped = next((r for r in rows if r["mode"] == "vllm_backend"), None)
    if wrapped and engine:
        lines.append(f"vllm backend / vLLM engine: {wrapped['tok_s'] / engine['tok_s']:.2f}")
    return lines + [f"- {n}" for n in notes]


def rounds_summary(rows: list[dict]) -> list[str]:
    """Each engine's median tok/s over the rounds, and its tok/s by the engine that ran before."""
    import statistics

    groups: dict = {}
    for r in rows:
        if "round" in r:
            groups.setdefault((r["mode"], r["dtype"], r["batch_size"]), []).append(r)
    lines = [
        "| mode | dtype | batch | median tok/s | tok/s by the engine run before |",
        "|---|---|---|---|---|",
    ]
    for (mode, dtype, batch_size), group in groups.items():
        median = statistics.median(r["tok_s"] for r in group)
        after = ", ".join(f"{r['after'] or 'none'}: {r['tok_s']}" for r in group)
        lines.append(f"| {mode} | {dtype} | {batch_size} | {median} | {after} |")
    return lines + [""]
