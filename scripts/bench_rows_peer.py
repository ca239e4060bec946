#!/usr/bin/env python3
"""The Python side of `ort-bind-bench rows` (continuous batching): the same requests as the
Rust bench (prompt i: 4 + (7 i mod 16) tokens, (5 + 37 i + 53 j) mod 500; NEW greedy
tokens each) on a decoder fixture folder with a genai_config.json, served three ways:

  genai_sequential  onnxruntime-genai, one after another, a generator per request;
  genai_engine      onnxruntime-genai's continuous-batching `Engine` (requests submitted
                    together; it schedules them in batches of its configured size);
  python_sequential onnxruntime through I/O binding, one after another on one
                    shared-buffer cache (`bench_decode_peer.PythonPeer`, the decode bench's
                    Python peer).

Prints tokens per second, all requests together, the median over rounds, and exits 1 if
the ways give a request different tokens. With `--json OUT` it writes each round's rates
and the tokens (`ort-bind-bench rows --python` runs it once per round, right after its own
contenders, and checks the tokens against ort-bind's).

    python3 scripts/bench_rows_peer.py [--folder ort-bind-tests/tests/fixtures/decoders/gqa_f32]
                                       [--requests 1,4,8,16] [--new 64] [--rounds 3] [--json OUT]
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime_genai as og

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_decode_peer import PythonPeer  # noqa: E402


def prompt(i):
    return [(5 + 37 * i + 53 * j) % 500 for j in range(4 + (i * 7) % 16)]


def one_by_one(model, requests, new):
    out = []
    start = time.perf_counter()
    for i in range(requests):
        p = prompt(i)
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=len(p) + new, do_sample=False)
        gen = og.Generator(model, params)
        gen.append_tokens(np.array([p], np.int32))
        tokens = []
        while len(tokens) < new:
            gen.generate_next_token()
            tokens.append(int(gen.get_next_tokens()[0]))
        out.append(tokens)
    return requests * new / (time.perf_counter() - start), out


def python_sequential(folder, requests, new):
    peer = PythonPeer(os.path.join(folder, "model.onnx"), 20 + new, shared=True)
    out = []
    start = time.perf_counter()
    for i in range(requests):
        tok = peer.prefill(prompt(i))
        tokens = [tok]
        while len(tokens) < new:
            tok = peer.step(tok)
            tokens.append(tok)
        out.append(tokens)
    return requests * new / (time.perf_counter() - start), out


def engine(model, requests, new):
    eng = og.Engine(model)
    reqs = []
    start = time.perf_counter()
    for i in range(requests):
        r = eng.create_request()
        turn = og.TurnOptions(r)
        turn.set_do_sample(False)
        turn.set_max_generated_tokens(new)
        r.begin_turn(np.array(prompt(i), np.int32), turn)
        reqs.append(r)
    out = [[] for _ in reqs]
    buf = eng.create_event_buffer(256)
    while eng.has_pending_requests():
        for ev in eng.run(buf):
            if ev.token is not None:
                out[next(k for k, r in enumerate(reqs) if r == ev.request)].append(int(ev.token))
    rate = requests * new / (time.perf_counter() - start)
    for r in reqs:
        r.close()
    return rate, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folder", default="ort-bind-tests/tests/fixtures/decoders/gqa_f32")
    ap.add_argument("--requests", default="1,4,8,16")
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write each round's rates and the tokens here")
    args = ap.parse_args()
    model = og.Model(args.folder)
    quiet = args.json is not None
    if not quiet:
        print(f"onnxruntime-genai {og.__version__}, {args.folder}, {args.new} new tokens per request")
        print(f"engine batch size: {og.Engine(model).get_capabilities().configured_max_batch_size}")
        print("| requests | genai, a generator per request (tokens/s) | genai Engine (tokens/s) | Python onnxruntime, one after another (tokens/s) |")
        print("| ---: | ---: | ---: | ---: |")
    rows = []
    for requests in map(int, args.requests.split(",")):
        rates = {"genai_sequential": [], "genai_engine": [], "python_sequential": []}
        for _ in range(args.rounds):
            rate, alone = one_by_one(model, requests, args.new)
            rates["genai_sequential"].append(rate)
            rate, batched = engine(model, requests, args.new)
            rates["genai_engine"].append(rate)
            rate, python = python_sequential(args.folder, requests, args.new)
            rates["python_sequential"].append(rate)
            for name, tokens in (("the Engine", batched), ("Python onnxruntime", python)):
                if tokens != alone:
                    print(f"{requests} requests: {name} gave other tokens than genai's generators")
                    raise SystemExit(1)
        rows.append({"requests": requests, "rates": rates, "tokens": alone})
        if not quiet:
            med = {k: statistics.median(v) for k, v in rates.items()}
            print(f"| {requests} | {med['genai_sequential']:.0f} | {med['genai_engine']:.0f} | {med['python_sequential']:.0f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
