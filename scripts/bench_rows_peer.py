#!/usr/bin/env python3
"""onnxruntime-genai's side of `ort-bind-bench rows` (continuous batching): the same
requests as the Rust bench (prompt i: 4 + (7 i mod 16) tokens, (5 + 37 i + 53 j) mod 500;
NEW greedy tokens each) on a decoder fixture folder with a genai_config.json, served two
ways: one after another with a generator per request, and all at once through genai's
continuous-batching `Engine` (requests submitted together; it schedules them in batches
of its configured size). Prints tokens per second, all requests together, the median
over rounds, and exits 1 if the two ways give a request other tokens. (The fixture's
`reference.py` checks genai's greedy tokens against onnxruntime's; the Rust bench checks
its own against the same references.)

    python3 scripts/bench_rows_peer.py [--folder ort-bind-tests/tests/fixtures/decoders/gqa_f32]
                                       [--requests 1,4,8,16] [--new 64] [--rounds 3]
"""

import argparse
import statistics
import time

import numpy as np
import onnxruntime_genai as og


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
    args = ap.parse_args()
    model = og.Model(args.folder)
    print(f"onnxruntime-genai {og.__version__}, {args.folder}, {args.new} new tokens per request")
    print(f"engine batch size: {og.Engine(model).get_capabilities().configured_max_batch_size}")
    print("| requests | genai, a generator per request (tokens/s) | genai Engine (tokens/s) |")
    print("| ---: | ---: | ---: |")
    for requests in map(int, args.requests.split(",")):
        seq, eng = [], []
        for _ in range(args.rounds):
            rate, alone = one_by_one(model, requests, args.new)
            seq.append(rate)
            rate, batched = engine(model, requests, args.new)
            eng.append(rate)
            if alone != batched:
                print(f"{requests} requests: the Engine gave other tokens")
                raise SystemExit(1)
        print(f"| {requests} | {statistics.median(seq):.0f} | {statistics.median(eng):.0f} |")


if __name__ == "__main__":
    main()
