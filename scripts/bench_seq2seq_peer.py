#!/usr/bin/env python3
"""Python peers for ort-bind's encoder-decoder generation: per-token latency of greedy decoding.

    python3 scripts/bench_seq2seq_peer.py [--fixtures DIR] [--contexts 16,256] [--steps 32]
                                          [--warmup 4] [--rounds 1] [--only speech,marian]
                                          [--no-genai] [--json OUT]

DIR (default ort-bind-tests/tests/fixtures/pipelines) holds `speech/` and `marian/` (each
`encoder.onnx`, `decoder.onnx`, `genai_config.json`; see the README there). Batch 1, one
intra-op thread, the same source for every peer and for ort-bind-bench's Rust contenders
(`ort-bind-bench seq2seq`, which runs this script):

  speech  audio_features[0, c, t] = float32(sin(0.01 (t + 1)(c + 1))), 16 x 3000 frames (the
          only num_frames onnxruntime-genai's whisper accepts; encoder length 1500). The decoder
          prompt is the start token 2 then prompt_ids(C - warmup - 1), run at once.
  marian  source [5 + 29 i mod 500 for i < 15] + [0 (eos)], all-ones mask (genai gives a batch-1
          source an all-ones mask and appends the eos itself, so every contender gets exactly
          what genai feeds). genai feeds the decoder its start token 2 and then its own picks, so
          every peer does: the start token, then C - warmup - 1 greedy steps (not timed), one
          decoder run per token.

For each fixture and context C: the decoder holds C - warmup positions after the prompt (the
"prefill"; not timed), `warmup` greedy steps run (not timed), then `steps` single-token greedy
steps are timed one by one, at past lengths C .. C + steps - 1. A step is: bind/update the
inputs, run the decoder, argmax of the logits. C is capped so that every timed step fits every
peer: speech C + steps <= 448 (the decoder's position table), marian C + steps <= 241
(genai's max_length 256, its context_length, counts the 15 source ids; the position table has
256 rows). Peers:

  python_iobinding  onnxruntime (one intra-op thread, sequential, graph optimisation all) through
                    io_binding. The encoder runs once with its outputs bound to OrtValues, and
                    those OrtValues are bound as the decoder's inputs held for the sequence (speech:
                    the four present_*_cross_i as past_*_cross_i; marian: encoder_outputs as
                    encoder_hidden_states, the source mask buffer as encoder_attention_mask):
                    nothing copied. speech: every self cache past/present pair in two preallocated
                    flat buffers of the full capacity, bound by pointer with the step's shape and
                    swapped after the run; ids [1, 1] and logits [1, 1, 512] buffers bound once.
                    marian: ids [1] and past_key_values_length [1] buffers bound once and updated
                    in place, rnn_states / rnn_states_prev two OrtValues swapped, logits one
                    OrtValue bound once.
  genai             onnxruntime-genai on the fixture folder (its genai_config.json: one intra-op
                    thread, growing cache). speech: NamedTensors {audio_features, input_ids =
                    the prompt} and set_inputs; marian: append_tokens(the 15 source ids). The
                    untimed steps are generate_next_token() calls; each timed step is
                    generate_next_token() + get_next_tokens().

Every row of the JSON list: {"fixture", "context", "peer", "median_us", "mean_us", "steps",
"step_ns", "tokens"}; `step_ns` holds every timed step (steps * rounds), `tokens` the tokens
fed to the decoder after the prompt, one per run (the first round's). The tokens of the peers
are compared and a mismatch is printed.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FIXTURES = os.path.join(ROOT, "ort-bind-tests", "tests", "fixtures", "pipelines")
FIXTURES = ("speech", "marian")
START = 2
VOCAB, HEADS, HEAD, HIDDEN, N_MELS = 512, 4, 16, 64, 16
SPEECH_FRAMES = 3000
MARIAN_SOURCE = [5 + (29 * i) % 500 for i in range(15)]  # genai appends the eos (0)
MARIAN_STATE = (3, 1, 64)
# The largest C + steps that every contender runs (see the module docs).
LIMITS = {"speech": 448, "marian": 241}


def prompt_ids(n):
    return [1 + (7 + 13 * i) % 511 for i in range(n)]


def effective_context(fixture, context, steps):
    return min(context, LIMITS[fixture] - steps)


def speech_prompt(context, warmup):
    return [START] + prompt_ids(context - warmup - 1)


def audio_features(frames):
    t = np.arange(frames, dtype=np.float64)[None, None, :]
    c = np.arange(N_MELS, dtype=np.float64)[None, :, None]
    return np.sin(0.01 * (t + 1) * (c + 1)).astype(np.float32)


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


class SpeechPeer:
    """Encoder outputs bound into the OrtValues the decoder reads; self caches swapped."""

    def __init__(self, folder, capacity):
        self.enc = session(os.path.join(folder, "encoder.onnx"))
        self.dec = session(os.path.join(folder, "decoder.onnx"))
        t = (SPEECH_FRAMES - 1) // 2 + 1
        self.audio = audio_features(SPEECH_FRAMES)
        eb = self.enc.io_binding()
        eb.bind_cpu_input("audio_features", self.audio)
        self.enc_values = {}
        for o in self.enc.get_outputs():
            dims = [1, t, HIDDEN] if o.name == "encoder_hidden_states" else [1, HEADS, t, HEAD]
            self.enc_values[o.name] = ort.OrtValue.ortvalue_from_shape_and_type(dims, np.float32)
            eb.bind_ortvalue_output(o.name, self.enc_values[o.name])
        self.enc_binding = eb
        db = self.dec.io_binding()
        for o in self.enc.get_outputs():
            if "cross" in o.name:
                db.bind_ortvalue_input(o.name.replace("present_", "past_"), self.enc_values[o.name])
        self.presents = [o.name for o in self.dec.get_outputs() if o.name != "logits"]
        # [past name, present name, buffer, buffer, pointer, pointer]: `.ctypes.data` costs
        # microseconds, so it is read once
        self.kv = []
        for p in self.presents:
            bufs = [np.zeros(HEADS * capacity * HEAD, np.float32) for _ in range(2)]
            self.kv.append([p.replace("present_", "past_"), p] + bufs + [b.ctypes.data for b in bufs])
        self.ids = np.zeros(capacity, np.int64)
        self.logits = np.zeros(capacity * VOCAB, np.float32)
        self.ids_ptr, self.logits_ptr = self.ids.ctypes.data, self.logits.ctypes.data
        self.binding = db
        self.total = 0

    def encode(self):
        self.enc.run_with_iobinding(self.enc_binding)

    def prefill(self, prompt):
        s, b = len(prompt), self.binding
        self.total = 0
        self.ids[:s] = prompt
        b.bind_input("input_ids", "cpu", 0, np.int64, [1, s], self.ids_ptr)
        b.bind_output("logits", "cpu", 0, np.float32, [1, s, VOCAB], self.logits_ptr)
        tok = self._run(s)
        b.bind_input("input_ids", "cpu", 0, np.int64, [1, 1], self.ids_ptr)
        b.bind_output("logits", "cpu", 0, np.float32, [1, 1, VOCAB], self.logits_ptr)
        return tok

    def _run(self, s):
        b, t = self.binding, self.total
        for kv in self.kv:
            b.bind_input(kv[0], "cpu", 0, np.float32, [1, HEADS, t, HEAD], kv[4])
            b.bind_output(kv[1], "cpu", 0, np.float32, [1, HEADS, t + s, HEAD], kv[5])
        self.dec.run_with_iobinding(b)
        for kv in self.kv:
            kv[2], kv[3], kv[4], kv[5] = kv[3], kv[2], kv[5], kv[4]
        self.total = t + s
        return int(self.logits[(s - 1) * VOCAB : s * VOCAB].argmax())

    def step(self, tok):
        self.ids[0] = tok
        return self._run(1)


class MarianPeer:
    """encoder_outputs bound into the OrtValue the decoder reads; rnn states swapped."""

    def __init__(self, folder, capacity):
        del capacity  # every buffer is fixed-size
        self.enc = session(os.path.join(folder, "encoder.onnx"))
        self.dec = session(os.path.join(folder, "decoder.onnx"))
        self.source = np.array([MARIAN_SOURCE + [0]], np.int64)
        self.mask = np.ones_like(self.source)
        eb = self.enc.io_binding()
        eb.bind_cpu_input("input_ids", self.source)
        eb.bind_cpu_input("attention_mask", self.mask)
        self.hidden = ort.OrtValue.ortvalue_from_shape_and_type([1, self.source.shape[1], HIDDEN], np.float32)
        eb.bind_ortvalue_output("encoder_outputs", self.hidden)
        self.enc_binding = eb
        db = self.dec.io_binding()
        self.ids = np.zeros(1, np.int64)
        self.past_len = np.zeros(1, np.int64)
        self.states = [ort.OrtValue.ortvalue_from_numpy(np.zeros(MARIAN_STATE, np.float32)) for _ in range(2)]
        self.logits = np.zeros((1, VOCAB), np.float32)
        db.bind_input("input_ids", "cpu", 0, np.int64, [1], self.ids.ctypes.data)
        db.bind_input("past_key_values_length", "cpu", 0, np.int64, [1], self.past_len.ctypes.data)
        db.bind_ortvalue_input("encoder_hidden_states", self.hidden)
        db.bind_input("encoder_attention_mask", "cpu", 0, np.int64, list(self.mask.shape), self.mask.ctypes.data)
        db.bind_output("logits", "cpu", 0, np.float32, [1, VOCAB], self.logits.ctypes.data)
        self.binding = db

    def encode(self):
        self.enc.run_with_iobinding(self.enc_binding)

    def prefill(self, prompt):
        assert prompt == [START], "the Marian decoder's prompt is its start token"
        self.past_len[0] = -1  # a fresh peer: the states are zeros
        return self.step(START)

    def step(self, tok):
        b = self.binding
        self.ids[0] = tok
        self.past_len[0] += 1
        b.bind_ortvalue_input("rnn_states_prev", self.states[0])
        b.bind_ortvalue_output("rnn_states", self.states[1])
        self.dec.run_with_iobinding(b)
        self.states.reverse()
        return int(self.logits[0].argmax())


def time_python(fixture, folder, context, warmup, steps):
    peer = (SpeechPeer if fixture == "speech" else MarianPeer)(folder, context + steps + 1)
    peer.encode()
    prompt = speech_prompt(context, warmup) if fixture == "speech" else [START]
    tok = peer.prefill(prompt)
    toks = [tok]
    # marian: the rest of the prefill, one greedy run per token
    for _ in range(context - warmup - len(prompt) + warmup):
        tok = peer.step(tok)
        toks.append(tok)
    times = []
    clock = time.perf_counter_ns
    for _ in range(steps):
        t0 = clock()
        tok = peer.step(tok)
        times.append(clock() - t0)
        toks.append(tok)
    return times, toks[:-1]


def time_genai(fixture, folder, context, warmup, steps):
    import onnxruntime_genai as og

    model = og.Model(folder)
    params = og.GeneratorParams(model)
    if fixture == "speech":
        prompt = speech_prompt(context, warmup)
        params.set_search_options(max_length=len(prompt) + warmup + steps + 1, do_sample=False, batch_size=1)
        gen = og.Generator(model, params)
        inputs = og.NamedTensors()
        inputs["audio_features"] = audio_features(SPEECH_FRAMES)
        inputs["input_ids"] = np.array([prompt], np.int32)
        gen.set_inputs(inputs)
    else:
        prompt = [START]
        params.set_search_options(max_length=LIMITS["marian"] + len(MARIAN_SOURCE), do_sample=False, batch_size=1)
        gen = og.Generator(model, params)
        gen.append_tokens(np.array([MARIAN_SOURCE], np.int32))
    toks = []
    # the prompt's run, the rest of the prefill (marian) and the warm-up steps
    for _ in range(1 + context - len(prompt)):
        gen.generate_next_token()
        toks.append(int(gen.get_next_tokens()[0]))
    times = []
    clock = time.perf_counter_ns
    for _ in range(steps):
        t0 = clock()
        gen.generate_next_token()
        tok = int(gen.get_next_tokens()[0])
        times.append(clock() - t0)
        toks.append(tok)
    return times, toks[:-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixtures", default=DEFAULT_FIXTURES)
    ap.add_argument("--contexts", default="16,256")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1, help="repeat each (fixture, context) this often, peers interleaved")
    ap.add_argument("--only", default="", help="comma-separated fixture names (default: speech,marian)")
    ap.add_argument("--no-genai", action="store_true")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()

    contexts = [int(c) for c in args.contexts.split(",")]
    names = [n for n in FIXTURES if not args.only or n in args.only.split(",")]
    peers = ["python_iobinding"] + ([] if args.no_genai else ["genai"])
    print(f"onnxruntime {ort.__version__}", end="")
    if not args.no_genai:
        import onnxruntime_genai as og

        print(f", onnxruntime-genai {og.__version__}", end="")
    print(f"; {args.steps} timed steps x {args.rounds} round(s) after {args.warmup} warm-up steps; µs per token")
    print(f"{'fixture':8} {'context':>7} {'peer':18} {'median':>9} {'mean':>9}")
    rows, mismatches = [], 0
    for name in names:
        folder = os.path.join(args.fixtures, name)
        for asked in contexts:
            ctx = effective_context(name, asked, args.steps)
            if ctx <= args.warmup + 1:
                sys.exit(f"{name}: context {ctx} leaves no room for the prompt and {args.warmup} warm-up steps")
            times = {p: [] for p in peers}
            tokens = {}
            for _ in range(args.rounds):
                for peer in peers:
                    timer = time_genai if peer == "genai" else time_python
                    t, toks = timer(name, folder, ctx, args.warmup, args.steps)
                    times[peer].extend(t)
                    tokens.setdefault(peer, toks)
            ref = tokens[peers[0]]
            for peer in peers:
                us = [t / 1000.0 for t in times[peer]]
                rows.append({
                    "fixture": name,
                    "context": ctx,
                    "peer": peer,
                    "median_us": round(statistics.median(us), 2),
                    "mean_us": round(statistics.fmean(us), 2),
                    "steps": len(us),
                    "step_ns": [int(t) for t in times[peer]],
                    "tokens": tokens[peer],
                })
                flag = ""
                if tokens[peer] != ref:
                    flag = f"  (TOKENS DIFFER from {peers[0]}!)"
                    mismatches += 1
                note = f" (asked {asked})" if ctx != asked else ""
                print(f"{name:8} {ctx:7} {peer:18} {rows[-1]['median_us']:9.1f} {rows[-1]['mean_us']:9.1f}{flag}{note}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
    if mismatches:
        print(f"{mismatches} peer(s) picked other tokens than {peers[0]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
