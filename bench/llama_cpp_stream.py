"""llama.cpp single-stream reference for bench_generation (runs in the benchmark's own venv).

Usage: ``python llama_cpp_stream.py ARGS.json`` with ``{gguf, prompts (token ids), eos, threads,
new}``. Feeds the same prompt token ids as the transformers runs, decodes greedily with the same
repetition penalty (llama.cpp's variant), stops at EOS or ``new`` tokens, and prints one JSON line
with new tokens, seconds and tokens/s. Imports nothing from oncoeval.
"""

import json
import sys
import time

from llama_cpp import Llama


def main(path: str) -> None:
    args = json.loads(open(path).read())
    llm = Llama(
        model_path=args["gguf"],
        n_threads=args["threads"],
        n_threads_batch=args["threads"],
        n_ctx=1024,
        n_batch=512,
        verbose=False,
    )
    tokens = 0
    started = time.perf_counter()
    for prompt in args["prompts"]:
        llm.reset()  # no prompt reuse between requests
        produced = 0
        for token in llm.generate(prompt, temp=0.0, top_k=1, repeat_penalty=1.2, reset=True):
            if token == args["eos"]:
                break
            produced += 1
            if produced >= args["new"]:
                break
        tokens += produced
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "new_tokens": tokens,
                "seconds": round(seconds, 2),
                "tok_s": round(tokens / seconds, 2),
                "llama_cpp_version": __import__("llama_cpp").__version__,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
