#!/usr/bin/env python3
"""Python peers for ort-bind's KV-cache decode loop: per-token latency of greedy decoding.

    python3 scripts/bench_decode_peer.py [--fixtures DIR] [--contexts 16,256,2048] [--steps 32]
                                         [--warmup 4] [--rounds 1] [--only NAME,...] [--json OUT]

DIR (default ort-bind-tests/tests/fixtures/decoders) holds one folder per decoder fixture with
`model.onnx` and `genai_config.json` (written by make_decoders.py there). For each fixture and
context C, batch 1: a prompt of C - warmup tokens is prefilled (not timed), `warmup` greedy
steps are run (not timed), then `steps` single-token greedy steps are timed, so the timed
steps run at past lengths C .. C + steps - 1. A step is: bind/update the inputs, run, argmax
of the logits. Peers:

  python_iobinding         onnxruntime (one intra-op thread, sequential, default graph
                           optimisation = all) through io_binding: input_ids/position_ids are
                           [1, 1] numpy buffers bound once and updated in place; attention_mask
                           is a prefix of a ones buffer, rebound with its new length; every
                           past/present pair lives in two preallocated flat buffers of the full
                           capacity, bound by pointer with the step's shape and swapped after the
                           run (no copy, no allocation); logits go to a preallocated buffer.
  python_iobinding_shared  gqa_* only: GroupQueryAttention's static cache (onnxruntime-genai's
                           past_present_share_buffer): one [1, kv_heads, capacity, 16] OrtValue
                           per K/V per layer bound once as both past and present; per step only
                           the ids, positions and the mask length change.
  genai                    onnxruntime-genai on the same folder: og.Model, GeneratorParams with
                           search max_length = prompt + warmup + steps, Generator,
                           append_tokens(prompt) (not timed); each timed step is
                           generate_next_token() + get_next_tokens(). Its cache mode follows
                           genai_config.json (see the "cache" field).

Every row of the JSON list: {"fixture", "context", "peer", "median_us", "mean_us", "steps",
"cache", "step_ns"} (`step_ns`: every timed step, for medians over several runs); `steps` counts the timed steps (steps * rounds). The greedy tokens of the peers are
compared and a mismatch is printed.
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
DEFAULT_FIXTURES = os.path.join(ROOT, "ort-bind-tests", "tests", "fixtures", "decoders")
BASE_INPUTS = ("input_ids", "attention_mask", "position_ids")


def prompt_ids(n):
    return [1 + (7 + 13 * i) % 511 for i in range(n)]


def past_name(present):
    if present.startswith("present_conv."):
        return "past_conv." + present[len("present_conv."):]
    if present.startswith("present."):
        return "past_key_values." + present[len("present."):]
    return "past_" + present[len("present_"):]


def np_type(t):
    return {"tensor(float)": np.float32, "tensor(float16)": np.float16}[t]


class PythonPeer:
    def __init__(self, model_path, capacity, shared):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
        outs = self.sess.get_outputs()
        self.presents = [o.name for o in outs if o.name != "logits"]
        self.logits_type = np_type(next(o.type for o in outs if o.name == "logits"))
        self.vocab = next(o.shape[-1] for o in outs if o.name == "logits")
        ins = {i.name: i for i in self.sess.get_inputs()}
        self.capacity = capacity
        self.shared = shared
        self.kv = []  # (past, present, dtype, dims template, seq axis, buffers or OrtValue)
        for present in self.presents:
            past = past_name(present)
            info = ins[past]
            dtype = np_type(info.type)
            axis = next((k for k, d in enumerate(info.shape) if isinstance(d, str) and d != "batch_size"), None)
            dims = [1 if d == "batch_size" else d for d in info.shape]
            if shared and axis is not None:
                full = list(dims)
                full[axis] = capacity
                arr = np.zeros(full, dtype)
                self.kv.append((past, present, dtype, dims, axis, (arr, ort.OrtValue.ortvalue_from_numpy(arr))))
            else:
                n = int(np.prod([capacity if k == axis else d for k, d in enumerate(dims)]))
                arrs = [np.zeros(n, dtype), np.zeros(n, dtype)]
                # [buffer, buffer, pointer, pointer]: `.ctypes.data` costs microseconds, so read it once
                self.kv.append((past, present, dtype, dims, axis, arrs + [a.ctypes.data for a in arrs]))
        self.ids = np.zeros(capacity, np.int64)
        self.pos = np.zeros(capacity, np.int64)
        self.mask = np.ones(capacity, np.int64)
        self.logits = np.zeros(capacity * self.vocab, self.logits_type)
        self.ids_ptr, self.pos_ptr = self.ids.ctypes.data, self.pos.ctypes.data
        self.mask_ptr, self.logits_ptr = self.mask.ctypes.data, self.logits.ctypes.data
        self.binding = self.sess.io_binding()
        self.total = 0

    def _dims(self, dims, axis, n):
        return [n if k == axis else d for k, d in enumerate(dims)]

    def prefill(self, prompt):
        """Runs the prompt (any length) and returns the greedy token; binds the decode shapes."""
        b, s = self.binding, len(prompt)
        for past, present, dtype, dims, axis, buf in self.kv:
            if isinstance(buf, tuple):
                buf[0][...] = 0
                b.bind_ortvalue_input(past, buf[1])
                b.bind_ortvalue_output(present, buf[1])
        self.total = 0
        tok = self._run(np.asarray(prompt, np.int64), s)
        # decode shapes: [1, 1] ids/positions and [1, 1, vocab] logits stay bound
        b.bind_input("input_ids", "cpu", 0, np.int64, [1, 1], self.ids_ptr)
        b.bind_input("position_ids", "cpu", 0, np.int64, [1, 1], self.pos_ptr)
        b.bind_output("logits", "cpu", 0, self.logits_type, [1, 1, self.vocab], self.logits_ptr)
        return tok

    def _run(self, ids, s):
        b, t = self.binding, self.total
        self.ids[:s] = ids
        self.pos[:s] = np.arange(t, t + s)
        b.bind_input("input_ids", "cpu", 0, np.int64, [1, s], self.ids_ptr)
        b.bind_input("position_ids", "cpu", 0, np.int64, [1, s], self.pos_ptr)
        b.bind_output("logits", "cpu", 0, self.logits_type, [1, s, self.vocab], self.logits_ptr)
        return self._bind_kv_run(s)

    def _bind_kv_run(self, s):
        b, t = self.binding, self.total
        b.bind_input("attention_mask", "cpu", 0, np.int64, [1, t + s], self.mask_ptr)
        for past, present, dtype, dims, axis, buf in self.kv:
            if isinstance(buf, list):
                b.bind_input(past, "cpu", 0, dtype, self._dims(dims, axis, t), buf[2])
                b.bind_output(present, "cpu", 0, dtype, self._dims(dims, axis, t + s), buf[3])
        self.sess.run_with_iobinding(b)
        for kv in self.kv:
            buf = kv[5]
            if isinstance(buf, list):
                buf[0], buf[1], buf[2], buf[3] = buf[1], buf[0], buf[3], buf[2]
        self.total = t + s
        return int(self.logits[(s - 1) * self.vocab : s * self.vocab].argmax())

    def step(self, tok):
        self.ids[0] = tok
        self.pos[0] = self.total
        return self._bind_kv_run(1)


def cache_mode(cfg):
    dec = cfg["model"]["decoder"]
    share = cfg["search"].get("past_present_share_buffer", False)
    if cfg["model"]["type"] == "gpt2":
        return "genai CombinedKeyValueCache: growing, new [2,1,H,T,16] present per step, past = last present"
    if cfg["model"]["type"] == "lfm2":
        return "genai LFM2Cache: growing KV (new present per step) + conv state swapped" + (" (KV shared)" if share else "")
    if share:
        return "genai DefaultKeyValueCache: shared buffer [1,H,max_length,16] bound as past and present"
    return "genai DefaultKeyValueCache: growing, new present per step, past = last present"


def time_python(folder, prompt, warmup, steps, shared):
    peer = PythonPeer(os.path.join(folder, "model.onnx"), len(prompt) + warmup + steps + 1, shared)
    tok = peer.prefill(prompt)
    toks = [tok]
    for _ in range(warmup):
        tok = peer.step(tok)
        toks.append(tok)
    times = []
    clock = time.perf_counter_ns
    for _ in range(steps):
        t0 = clock()
        tok = peer.step(tok)
        times.append(clock() - t0)
        toks.append(tok)
    return times, toks


def time_genai(folder, prompt, warmup, steps):
    import onnxruntime_genai as og

    model = og.Model(folder)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + warmup + steps + 1, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(np.array([prompt], np.int32))
    toks = []
    for _ in range(warmup + 1):
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
    return times, toks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixtures", default=DEFAULT_FIXTURES)
    ap.add_argument("--contexts", default="16,256,2048")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1, help="repeat each (fixture, context) this often, peers interleaved")
    ap.add_argument("--only", default="", help="comma-separated fixture names (default: all folders)")
    ap.add_argument("--no-genai", action="store_true")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()

    contexts = [int(c) for c in args.contexts.split(",")]
    names = sorted(
        d for d in os.listdir(args.fixtures)
        if os.path.isfile(os.path.join(args.fixtures, d, "model.onnx"))
        and os.path.isfile(os.path.join(args.fixtures, d, "genai_config.json"))
    )
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows = []
    print(f"onnxruntime {ort.__version__}", end="")
    if not args.no_genai:
        import onnxruntime_genai as og

        print(f", onnxruntime-genai {og.__version__}", end="")
    print(f"; {args.steps} timed steps x {args.rounds} round(s) after {args.warmup} warm-up steps; µs per token")
    print(f"{'fixture':14} {'context':>7} {'peer':24} {'median':>9} {'mean':>9}")
    for name in names:
        folder = os.path.join(args.fixtures, name)
        with open(os.path.join(folder, "genai_config.json")) as f:
            cfg = json.load(f)
        gqa = any(n.op_type == "GroupQueryAttention" for n in _graph_nodes(folder))
        peers = [("python_iobinding", "growing: two preallocated capacity buffers per state, swapped")]
        if gqa:
            peers.append(("python_iobinding_shared", "shared: one [1,H,capacity,16] OrtValue as past and present"))
        if not args.no_genai:
            peers.append(("genai", cache_mode(cfg)))
        for ctx in contexts:
            prompt = prompt_ids(max(1, ctx - args.warmup))
            times = {p: [] for p, _ in peers}
            tokens = {}
            for _ in range(args.rounds):
                for peer, _ in peers:
                    if peer == "genai":
                        t, toks = time_genai(folder, prompt, args.warmup, args.steps)
                    else:
                        t, toks = time_python(folder, prompt, args.warmup, args.steps, peer.endswith("shared"))
                    times[peer].extend(t)
                    tokens.setdefault(peer, toks)
            ref = tokens[peers[0][0]]
            for peer, mode in peers:
                us = [t / 1000.0 for t in times[peer]]
                row = {
                    "fixture": name,
                    "context": ctx,
                    "peer": peer,
                    "median_us": round(statistics.median(us), 2),
                    "mean_us": round(statistics.fmean(us), 2),
                    "steps": len(us),
                    "cache": mode,
                    "step_ns": [int(t) for t in times[peer]],
                }
                rows.append(row)
                flag = "" if tokens[peer] == ref else "  (tokens differ from python_iobinding!)"
                print(f"{name:14} {ctx:7} {peer:24} {row['median_us']:9.1f} {row['mean_us']:9.1f}{flag}", flush=True)
    for peer, mode in sorted({(r["fixture"], r["cache"]) for r in rows if r["peer"] == "genai"}):
        print(f"genai cache mode, {peer}: {mode}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
    return 0


def _graph_nodes(folder):
    import onnx

    return onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False).graph.node


if __name__ == "__main__":
    sys.exit(main())
