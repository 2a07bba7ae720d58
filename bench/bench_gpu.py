"""GPU throughput (issue #8, item 6): an 8B-class model through the `hf` backend's decode loop.

Runs on a CUDA machine with only torch and transformers installed, offline and without weights:
the model is a randomly initialised Llama-3-8B-shaped ``LlamaForCausalLM`` built from a config
in bf16 (random weights cost the same FLOPs and bytes as real ones; the text is noise). Prompts
are random token ids of 120-180 tokens; every request asks for ``NEW`` new tokens.

Measured side by side (tokens/s = new tokens / wall time, prefill included):

- ``hf_generate``: ``transformers.generate`` one request at a time, and on static batches;
- ``backend``: ``oncoeval.backends.decoding.DecodeLoop`` (what ``hf`` runs) by batch size;
- ``backend_4bit``: the same with bitsandbytes NF4 weights (skipped without bitsandbytes);
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


def row(mode: str, batch_size: int, n: int, result) -> dict:
    tokens, seconds, peak = result
    out = {
        "mode": mode,
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
    import torch

    from oncoeval.backends.decoding import DecodeLoop, DecodeParams, Job

    caps = caps or [NEW] * len(ps)
    loop = DecodeLoop(model, [EOS], EOS, batch_size)
    pairs = enumerate(zip(ps, caps, strict=True))
    jobs = [Job(i, p, DecodeParams(max_new_tokens=c)) for i, (p, c) in pairs]
    with torch.inference_mode():
        return sum(len(j.tokens) for j in loop.run(jobs))


def hf_generate(model, batch_size: int, ps: list[list[int]], caps=None) -> int:
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
                min_new_tokens=longest,
                do_sample=False,
                pad_token_id=EOS,
            )
        tokens += sum(min(caps[i], out.shape[1] - width) for i in members)
    return tokens


def run(out_dir: Path) -> dict:
    try:
        import torch
    except ImportError:
        return {"skipped": "torch is not installed", "summary": ["skipped: no torch"]}
    if ON_CUDA and not torch.cuda.is_available():
        return {"skipped": "no CUDA device", "summary": ["skipped: no CUDA device here"]}
    import importlib.util

    device = torch.cuda.get_device_name(0) if ON_CUDA else f"{DEVICE} (smoke run)"
    rows: list[dict] = []
    notes: list[str] = []
    config = llama3_8b_config()
    model = random_model(config)
    warm = prompts(2, seed=99)
    decode_loop(model, 2, warm)  # CUDA kernels, allocator

    n1 = 8
    rows.append(row("hf_generate", 1, n1, timed(hf_generate, model, 1, prompts(n1))))
    for batch_size in BATCHES:
        n = n_requests(batch_size)
        ps = prompts(n)
        rows.append(row("backend", batch_size, n, timed(decode_loop, model, batch_size, ps)))
    for batch_size in (32, 64):
        if batch_size in BATCHES:
            n = n_requests(batch_size)
            ps = prompts(n)
            rows.append(
                row("hf_generate", batch_size, n, timed(hf_generate, model, batch_size, ps))
            )
    for batch_size in (32, 64):
        if batch_size in BATCHES:
            n = n_requests(batch_size)
            ps, caps = prompts(n), mixed_caps(n)
            for mode, fn in (("hf_generate_mixed", hf_generate), ("backend_mixed", decode_loop)):
                rows.append(row(mode, batch_size, n, timed(fn, model, batch_size, ps, caps)))

    need_disk = ON_CUDA and (
        importlib.util.find_spec("bitsandbytes") or importlib.util.find_spec("vllm")
    )
    folder = None
    if need_disk:
        folder = Path(tempfile.mkdtemp(prefix="oncoeval-gpu-bench-"))
        model.save_pretrained(folder)
    del model
    if ON_CUDA:
        torch.cuda.empty_cache()

    try:
        if not ON_CUDA:
            notes.append("4-bit and vLLM skipped: not on CUDA")
        elif importlib.util.find_spec("bitsandbytes"):
            rows += run_4bit(folder)
        else:
            notes.append("4-bit skipped: bitsandbytes is not installed")
        if ON_CUDA and importlib.util.find_spec("vllm"):
            rows += run_vllm(folder)
        elif ON_CUDA:
            notes.append("vLLM skipped: vllm is not installed")
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    return {
        "device": device,
        "model": f"random Llama-3-8B shape ({LAYERS} layers), bf16",
        "new_tokens": NEW,
        "rows": rows,
        "notes": notes,
        "summary": summarise(rows, device, notes),
    }


def run_4bit(folder: Path) -> list[dict]:
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    quant = BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
    )
    model = AutoModelForCausalLM.from_pretrained(
        folder, quantization_config=quant, device_map=DEVICE, dtype=torch.bfloat16
    ).eval()
    out = []
    for batch_size in [b for b in BATCHES if b <= 64]:
        n = n_requests(batch_size)
        ps = prompts(n)
        out.append(row("backend_4bit", batch_size, n, timed(decode_loop, model, batch_size, ps)))
    del model
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
        from oncoeval.records import Request
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
        f"{'bf16' if ON_CUDA else 'fp32'}; {NEW} new tokens per request; prompts of 120-180 "
        "tokens.",
        "",
        "| mode | batch | requests | tok/s | peak GPU GB |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['mode']} | {r['batch_size'] or 'engine'} | {r['requests']} | {r['tok_s']} | {r['peak_gpu_gb']} |"
        for r in rows
    ]
    best = max((r for r in rows if r["mode"] == "backend"), key=lambda r: r["tok_s"], default=None)
    engine = next((r for r in rows if r["mode"] == "vllm_engine"), None)
    wrapped = next((r for r in rows if r["mode"] == "vllm_backend"), None)
    if best and engine:
        lines.append(
            f"\nhf backend best (batch {best['batch_size']}) / vLLM engine: "
            f"{best['tok_s'] / engine['tok_s']:.2f}"
        )
    if wrapped and engine:
        lines.append(f"vllm backend / vLLM engine: {wrapped['tok_s'] / engine['tok_s']:.2f}")
    for r in rows:
        if r["mode"] == "backend_mixed":
            static = next(
                s
                for s in rows
                if s["mode"] == "hf_generate_mixed" and s["batch_size"] == r["batch_size"]
            )
            lines.append(
                f"mixed caps, batch {r['batch_size']}: loop / static generate batches "
                f"{r['tok_s'] / static['tok_s']:.2f}"
            )
    return lines + [f"- {n}" for n in notes]
