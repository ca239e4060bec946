#!/usr/bin/env python3
"""onnxruntime-genai's side of `ort-bind-bench beam`: the same beam search (a 12-token prompt
(5 + 37 i) mod 500, NUM_BEAMS beams, max_length MAX_LENGTH, eos id 0, which the fixture never
ranks high, so every search runs to max_length) on a decoder fixture folder with a
genai_config.json, one intra-op thread. Prints one JSON line: the median over rounds of
generated positions per second (max_length - 12 per search) and the best sequence, which
the Rust bench compares with its own.

    python3 scripts/bench_beam_peer.py [--folder ort-bind-tests/tests/fixtures/decoders/gqa_f32]
                                       [--beams 4] [--max-length 140] [--rounds 5]
"""

import argparse
import json
import statistics
import time

import onnxruntime_genai as og

PROMPT = [(5 + 37 * i) % 500 for i in range(12)]


def search(model, beams, max_length):
    params = og.GeneratorParams(model)
    params.set_search_options(num_beams=beams, max_length=max_length, do_sample=False,
                              early_stopping=True, length_penalty=1.0, num_return_sequences=1)
    gen = og.Generator(model, params)
    gen.append_tokens(PROMPT)
    while not gen.is_done():
        gen.generate_next_token()
    return [int(t) for t in gen.get_sequence(0)][len(PROMPT):]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", default="ort-bind-tests/tests/fixtures/decoders/gqa_f32")
    ap.add_argument("--beams", type=int, default=4)
    ap.add_argument("--max-length", type=int, default=140)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    model = og.Model(args.folder)
    want = search(model, args.beams, args.max_length)  # warm-up
    rates = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        got = search(model, args.beams, args.max_length)
        rates.append((args.max_length - len(PROMPT)) / (time.perf_counter() - start))
        assert got == want
    print(json.dumps({"positions_per_s": statistics.median(rates), "best": want}))


if __name__ == "__main__":
    main()
