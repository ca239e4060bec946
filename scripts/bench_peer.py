#!/usr/bin/env python3
"""Python contenders for ort-bind's benchmark (driven by `ort-bind-bench`; see BENCHMARKS.md).

    python3 scripts/bench_peer.py serve
        Reads one JSON request per line on stdin and answers one JSON line on stdout.
        The Rust harness starts it and interleaves its blocks of runs with its own, so every
        comparison is paired in one run. Requests:
          {"cmd": "setup", "workload", "model", "inputs", "output", "set_files",
           "slots": [{"in_dims", "out_dims"}], "sequence"}
          {"cmd": "block", "workload", "contender", "start", "warm", "iters", "validate",
           "clock": "wall" | "thread_cpu"}
              -> {"fill", "run", "read", "total": [ns per timed run],
                  "edges": [[first, last] per timed run],
                  "validate": {"k", "first", "last", "sum"} (with "validate": true)}
          {"cmd": "threads", "workload", "threads", "runs"}
              -> {"seconds": wall time from the threads' common start to the last's end,
                  "outputs": [[first, last, sum] of each thread's last output]}
              (`ort-bind-bench serving`: `runs` runs on each of `threads` threads at once,
              each with its own binding, input and output arrays on the one
              python_iobinding session; single-dims workloads, first input set)
          {"cmd": "quit"}
    python3 scripts/bench_peer.py metadata MODEL [--reps N]
        Times onnx.load(MODEL, load_external_data=False) and prints one JSON line with the
        times and the process's peak RSS.

Contenders (onnxruntime 1.31.1, CPU, one intra-op thread, all graph optimisations):
- python_run: `session.run([output], feeds)` with a feed dict built once over preallocated
  numpy arrays (one per dims), filled in place each run; the output is a new array per run.
- python_iobinding: `session.run_with_iobinding(binding)`, the expert way: inputs and the
  output bound once by raw pointer to preallocated numpy arrays (`bind_input`/`bind_output`
  with `buffer_ptr`, so nothing is copied and nothing is allocated per run); one binding per
  dims, all over the same buffers; the output is read in place.

Phases, as in the Rust harness: fill = copy this run's inputs from the source arrays into
the arrays ONNX Runtime reads; run = the inference call; read = get the output as a host
array and read its first and last element.
"""

import json
import os
import sys
import time


def rss_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def metadata(argv):
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    import onnx

    baseline = rss_kib("VmRSS")
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter_ns()
        m = onnx.load(args.model, load_external_data=False)
        n_inputs = len(m.graph.input)
        t1 = time.perf_counter_ns()
        del m
        times.append(t1 - t0)
    print(json.dumps({"times_ns": times, "baseline_rss_kib": baseline,
                      "peak_rss_kib": rss_kib("VmHWM"), "inputs": n_inputs}), flush=True)


class Workload:
    def __init__(self, req):
        import numpy as np
        import onnxruntime as ort

        self.name = req["workload"]
        self.inputs = req["inputs"]
        self.output = req["output"]
        self.sequence = req["sequence"]
        self.slots = req["slots"]
        # sets[s][i]: flat float32 source values of input i in set s (largest dims).
        self.sets = [[np.fromfile(f, dtype="<f4") for f in files] for files in req["set_files"]]
        max_in = max(int(np.prod(s["in_dims"])) for s in self.slots)
        max_out = max(int(np.prod(s["out_dims"])) for s in self.slots)

        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        providers = ["CPUExecutionProvider"]

        # python_run: its own session and buffers; one feed dict per slot, built once.
        self.run_sess = ort.InferenceSession(req["model"], so, providers=providers)
        self.run_bufs = [np.zeros(max_in, dtype=np.float32) for _ in self.inputs]
        self.run_feeds = []
        for s in self.slots:
            n = int(np.prod(s["in_dims"]))
            self.run_feeds.append({name: buf[:n].reshape(s["in_dims"])
                                   for name, buf in zip(self.inputs, self.run_bufs)})
        self.run_out_names = [self.output]
        self.slot_lens = [(int(np.prod(s["in_dims"])), int(np.prod(s["out_dims"]))) for s in self.slots]

        # python_iobinding: its own session; buffers bound by pointer, one binding per slot.
        self.io_sess = ort.InferenceSession(req["model"], so, providers=providers)
        self.io_bufs = [np.zeros(max_in, dtype=np.float32) for _ in self.inputs]
        self.io_out = np.zeros(max_out, dtype=np.float32)
        self.io_bindings = []
        self.thread_bindings = []  # (binding, input arrays, output array) per thread
        for s in self.slots:
            b = self.io_sess.io_binding()
            for name, buf in zip(self.inputs, self.io_bufs):
                b.bind_input(name, "cpu", 0, np.float32, s["in_dims"], buf.ctypes.data)
            b.bind_output(self.output, "cpu", 0, np.float32, s["out_dims"], self.io_out.ctypes.data)
            self.io_bindings.append(b)

    def threads(self, n, runs):
        """`runs` runs of `run_with_iobinding` on each of `n` threads at once, on the one
        io session (onnxruntime releases the GIL while it runs)."""
        import threading

        import numpy as np

        if len(self.slots) != 1:
            raise ValueError("threads needs a workload with one set of dims")
        slot = self.slots[0]
        while len(self.thread_bindings) < n:
            bufs = [values.copy() for values in self.sets[0]]
            out = np.zeros(int(np.prod(slot["out_dims"])), dtype=np.float32)
            b = self.io_sess.io_binding()
            for name, buf in zip(self.inputs, bufs):
                b.bind_input(name, "cpu", 0, np.float32, slot["in_dims"], buf.ctypes.data)
            b.bind_output(self.output, "cpu", 0, np.float32, slot["out_dims"], out.ctypes.data)
            self.thread_bindings.append((b, bufs, out))
        sess = self.io_sess
        start = threading.Barrier(n + 1)
        errors = []

        def work(binding):
            start.wait()
            try:
                for _ in range(runs):
                    sess.run_with_iobinding(binding)
            except Exception as e:  # reported below
                errors.append(e)

        workers = [threading.Thread(target=work, args=(b,)) for b, _, _ in self.thread_bindings[:n]]
        for t in workers:
            t.start()
        start.wait()
        t0 = time.perf_counter_ns()
        for t in workers:
            t.join()
        t1 = time.perf_counter_ns()
        if errors:
            raise errors[0]
        outputs = [[float(out[0]), float(out[-1]), float(out.sum(dtype=np.float64))]
                   for _, _, out in self.thread_bindings[:n]]
        return {"seconds": (t1 - t0) / 1e9, "outputs": outputs}

    def lens(self, k):
        return self.slot_lens[self.sequence[k % len(self.sequence)]]

    def block(self, contender, start, warm, iters, validate, clock_name):
        import numpy as np

        # Same clocks as the Rust harness: wall time, or CPU time of this thread (the one
        # onnxruntime runs the model on, with one intra-op thread).
        clock = {"wall": time.perf_counter_ns, "thread_cpu": time.thread_time_ns}[clock_name]
        copyto = np.copyto
        nsets = len(self.sets)
        nseq = len(self.sequence)
        fill, run, read, total, edges = [], [], [], [], []
        if contender == "python_run":
            sess, feeds_of, out_names, bufs = self.run_sess, self.run_feeds, self.run_out_names, self.run_bufs

            def one(k):
                src = self.sets[k % nsets]
                slot = self.sequence[k % nseq]
                n, _ = self.lens(k)
                t0 = clock()
                for buf, values in zip(bufs, src):
                    copyto(buf[:n], values[:n])
                t1 = clock()
                res = sess.run(out_names, feeds_of[slot])
                t2 = clock()
                out = res[0].reshape(-1)
                first, last = float(out[0]), float(out[-1])
                del res, out
                t3 = clock()
                return t0, t1, t2, t3, first, last

            def full_sum(k):
                return float(sess.run(out_names, feeds_of[self.sequence[k % nseq]])[0].sum(dtype=np.float64))
        elif contender == "python_iobinding":
            sess, bindings, bufs, outbuf = self.io_sess, self.io_bindings, self.io_bufs, self.io_out

            def one(k):
                src = self.sets[k % nsets]
                slot = self.sequence[k % nseq]
                n, m = self.lens(k)
                t0 = clock()
                for buf, values in zip(bufs, src):
                    copyto(buf[:n], values[:n])
                t1 = clock()
                sess.run_with_iobinding(bindings[slot])
                t2 = clock()
                first, last = float(outbuf[0]), float(outbuf[m - 1])
                t3 = clock()
                return t0, t1, t2, t3, first, last

            def full_sum(k):
                _, m = self.lens(k)
                return float(outbuf[:m].sum(dtype=np.float64))
        else:
            raise ValueError(f"unknown contender {contender}")

        k = start
        for _ in range(warm):
            one(k)
            k += 1
        for _ in range(iters):
            t0, t1, t2, t3, first, last = one(k)
            fill.append(t1 - t0)
            run.append(t2 - t1)
            read.append(t3 - t2)
            total.append(t3 - t0)
            edges.append([first, last])
            k += 1
        reply = {"fill": fill, "run": run, "read": read, "total": total, "edges": edges}
        if validate:
            # Validation run (untimed): the full output sum.
            _, _, _, _, first, last = one(k)
            reply["validate"] = {"k": k, "first": first, "last": last, "sum": full_sum(k)}
        return reply


def serve():
    workloads = {}
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req.get("cmd")
            if cmd == "quit":
                break
            if cmd == "setup":
                workloads[req["workload"]] = Workload(req)
                import onnxruntime
                reply = {"ok": True, "onnxruntime": onnxruntime.__version__}
            elif cmd == "block":
                w = workloads[req["workload"]]
                reply = w.block(req["contender"], req["start"], req["warm"], req["iters"],
                                req.get("validate", True), req.get("clock", "wall"))
            elif cmd == "threads":
                reply = workloads[req["workload"]].threads(req["threads"], req["runs"])
            elif cmd == "drop":
                workloads.pop(req["workload"], None)
                reply = {"ok": True}
            else:
                reply = {"error": f"unknown command {cmd!r}"}
        except Exception as e:  # reported to the harness, which fails the run
            reply = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "serve":
        serve()
    elif len(sys.argv) >= 2 and sys.argv[1] == "metadata":
        metadata(sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
