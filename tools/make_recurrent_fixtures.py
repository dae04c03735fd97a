#!/usr/bin/env python3
"""Writes the fixtures for the recurrent MIL ops (lstm, gru, rnn); tests in
TesseraModelsTests/RecurrentFixtureTests.swift.

Regenerate (from the repository root; coremltools 9.0 saves packages on Linux x86_64):

    python3 -m venv /tmp/venv-coreml
    PIP_FIND_LINKS=/opt/wheels /tmp/venv-coreml/bin/pip install coremltools numpy torch
    /tmp/venv-coreml/bin/python tools/make_recurrent_fixtures.py

coremltools cannot predict on Linux, so no expected value comes from Core ML or from Tessera:

* `torch_*` cases are PyTorch modules (nn.LSTM, nn.RNN: uni- and bidirectional, several layers,
  batch_first) traced and converted by coremltools with its default passes; the expected
  outputs are PyTorch's. coremltools converts nn.GRU to a `while_loop` of element-wise ops and
  matmuls, not to `gru` (`torch_gru_while_loop*`, which run once control flow does), and refuses
  bidirectional nn.RNN; `mil_gru_reset_after_*` checks the iOS 18 `gru` against nn.GRU.
* `mil_*` cases are MIL-builder programs (peephole, clip, every activation, reverse and
  bidirectional directions, initial states) converted with the empty pass pipeline; the
  expected outputs come from the NumPy references below, written from the op definitions in
  coremltools (`converters/mil/mil/ops/defs/iOS15/recurrent.py`, iOS 17, iOS 18) and its own
  test references (`ops/tests/iOS14/test_recurrent.py`).

Output, in Tests/Fixtures/recurrent/: `<case>/model.mlpackage`, `<case>/<input>.npy`,
`<case>/expected_<i>.npy` (outputs in declaration order) and `cases.json` (inputs, outputs,
tolerances and the MIL op types of each program).
"""

import json
import os
import shutil

import numpy as np
import torch
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types

import fixture_cases

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "recurrent")
rng = np.random.default_rng(20261202)
CASES = []


def rand(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def record(name, model, inputs, expected, rtol, atol):
    CASES.append(fixture_cases.save(OUT, name, model, inputs, list(expected), rtol, atol, input_dtype=np.float32))


def save_mil(name, inputs, build, expected, target=ct.target.iOS15, rtol=1e-4, atol=1e-5):
    specs = [mb.TensorSpec(shape=v.shape, dtype=types.fp32) for v in inputs.values()]
    prog = fixture_cases.program(build, specs, list(inputs.keys()), target)
    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                       compute_precision=ct.precision.FLOAT32, pass_pipeline=ct.PassPipeline.EMPTY)
    record(name, model, inputs, expected, rtol, atol)


def save_torch(name, module, inputs, rtol=1e-4, atol=1e-5):
    module.eval()
    example = tuple(torch.from_numpy(v) for v in inputs.values())
    with torch.no_grad():
        expected = module(*example)
        traced = torch.jit.trace(module, example)
    expected = [e.numpy() for e in expected]
    model = ct.convert(traced, inputs=[ct.TensorType(name=k, shape=v.shape) for k, v in inputs.items()],
                       convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                       compute_precision=ct.precision.FLOAT32)
    record(name, model, inputs, expected, rtol, atol)


# MARK: - NumPy references (coremltools' definitions)

def act(name, x):
    name = name.lower()
    if name in ("tanh", "scaled_tanh"):
        return np.tanh(x)
    if name == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if name == "relu":
        return np.maximum(x, 0)
    if name in ("hard_sigmoid", "sigmoid_hard"):
        return np.minimum(np.maximum(0.2 * x + 0.5, 0), 1)
    if name == "linear":
        return x
    raise ValueError(name)


def lstm_direction(x, h, c, w_ih, w_hh, b, p, reverse, acts, clip):
    """One direction; weights [i, f, o, z]; returns the per-step h in processing order, h, c."""
    ra, ca, a = acts
    hidden = w_hh.shape[1]
    x = x.astype(np.float64)
    h, c = h.astype(np.float64), c.astype(np.float64)
    steps = x[::-1] if reverse else x
    outs = []
    for xt in steps:
        g = xt @ w_ih.T + h @ w_hh.T + b
        gi, gf, go, gz = (g[:, k * hidden:(k + 1) * hidden] for k in range(4))
        pi, pf, po = (p[k * hidden:(k + 1) * hidden] for k in range(3))
        i = act(ra, gi + pi * c)
        f = act(ra, gf + pf * c)
        z = act(ca, gz)
        c = f * c + i * z
        if clip is not None:
            c = np.clip(c, -clip, clip)
        o = act(ra, go + po * c)
        h = o * act(a, c)
        outs.append(h)
    return np.stack(outs), h, c


def gru_direction(x, h, w_ih, w_hh, b, reverse, acts):
    """MIL gru (reset before the product); weights [r, o, z]."""
    ra, a = acts
    hidden = w_hh.shape[1]
    h = h.astype(np.float64)
    wr, wo, wz = np.split(w_ih, 3)
    rr, ro, rz = np.split(w_hh, 3)
    br, bo, bz = np.split(b, 3)
    outs = []
    for xt in (x[::-1] if reverse else x):
        z = act(ra, xt @ wz.T + h @ rz.T + bz)
        r = act(ra, xt @ wr.T + h @ rr.T + br)
        o = act(a, xt @ wo.T + (r * h) @ ro.T + bo)
        h = (1 - z) * o + z * h
        outs.append(h)
    return np.stack(outs), h


def rnn_direction(x, h, w_ih, w_hh, b, reverse, activation):
    h = h.astype(np.float64)
    outs = []
    for xt in (x[::-1] if reverse else x):
        h = act(activation, xt @ w_ih.T + h @ w_hh.T + b)
        outs.append(h)
    return np.stack(outs), h


# MARK: - MIL-builder cases

def mil_lstm_cases():
    t, b, i, hid = 5, 3, 4, 6
    configs = [
        ("mil_lstm_peephole_clip", "forward", True, ("sigmoid", "tanh", "tanh"), 0.3, True),
        ("mil_lstm_reverse_seq", "reverse", True, ("sigmoid", "tanh", "tanh"), None, False),
        ("mil_lstm_reverse_last", "reverse", False, ("sigmoid", "tanh", "tanh"), None, True),
        ("mil_lstm_hard_sigmoid_relu", "forward", True, ("hard_sigmoid", "relu", "scaled_tanh"), 2.0, True),
        ("mil_lstm_linear_sigmoid", "forward", False, ("tanh", "linear", "sigmoid"), None, False),
        ("mil_lstm_bidirectional_seq", "bidirectional", True, ("sigmoid", "tanh", "tanh"), None, True),
        ("mil_lstm_bidirectional_last", "bidirectional", False, ("sigmoid", "relu", "tanh"), 0.5, True),
    ]
    for name, direction, seq, acts, clip, peephole in configs:
        dirs = 2 if direction == "bidirectional" else 1
        x = rand(t, b, i)
        h0, c0 = rand(b, dirs * hid), rand(b, dirs * hid)
        weights = []
        for _ in range(dirs):
            weights.append(dict(w_ih=rand(4 * hid, i), w_hh=rand(4 * hid, hid), b=rand(4 * hid),
                                p=rand(3 * hid) if peephole else np.zeros(3 * hid, np.float32)))
        outs, hs, cs = [], [], []
        for d, w in enumerate(weights):
            reverse = direction == "reverse" or d == 1
            o, h, c = lstm_direction(x, h0[:, d * hid:(d + 1) * hid], c0[:, d * hid:(d + 1) * hid], w["w_ih"],
                                     w["w_hh"], w["b"], w["p"], reverse, acts, clip)
            if d == 1:
                o = o[::-1]  # the reverse half of a bidirectional layer is in input order
            outs.append(o)
            hs.append(h)
            cs.append(c)
        out = np.concatenate(outs, axis=2)
        h_final, c_final = np.concatenate(hs, axis=1), np.concatenate(cs, axis=1)
        y = out if seq else h_final[None]

        def build(x, initial_h, initial_c, weights=weights, direction=direction, seq=seq, acts=acts, clip=clip,
                  peephole=peephole):
            args = dict(x=x, initial_h=initial_h, initial_c=initial_c, weight_ih=weights[0]["w_ih"],
                        weight_hh=weights[0]["w_hh"], bias=weights[0]["b"], direction=direction,
                        output_sequence=seq, recurrent_activation=acts[0], cell_activation=acts[1],
                        activation=acts[2])
            if peephole:
                args["peephole"] = weights[0]["p"]
            if clip is not None:
                args["clip"] = np.float32(clip)
            if direction == "bidirectional":
                args.update(weight_ih_back=weights[1]["w_ih"], weight_hh_back=weights[1]["w_hh"],
                            bias_back=weights[1]["b"])
                if peephole:
                    args["peephole_back"] = weights[1]["p"]
            return mb.lstm(**args)

        save_mil(name, dict(x=x, initial_h=h0, initial_c=c0), build, [y, h_final, c_final])


def mil_gru_rnn_cases():
    t, b, i, hid = 4, 2, 3, 5
    for name, direction, seq, acts in [
        ("mil_gru_forward_seq", "forward", True, ("sigmoid", "tanh")),
        ("mil_gru_reverse_seq", "reverse", True, ("hard_sigmoid", "relu")),
        ("mil_gru_reverse_last", "reverse", False, ("sigmoid", "scaled_tanh")),
    ]:
        x, h0 = rand(t, b, i), rand(b, hid)
        w_ih, w_hh, bias = rand(3 * hid, i), rand(3 * hid, hid), rand(3 * hid)
        out, h = gru_direction(x, h0, w_ih, w_hh, bias, direction == "reverse", acts)
        y = out if seq else h[None]
        save_mil(name, dict(x=x, initial_h=h0),
                 lambda x, initial_h, w_ih=w_ih, w_hh=w_hh, bias=bias, direction=direction, seq=seq, acts=acts:
                 mb.gru(x=x, initial_h=initial_h, weight_ih=w_ih, weight_hh=w_hh, bias=bias, direction=direction,
                        output_sequence=seq, recurrent_activation=acts[0], activation=acts[1]),
                 [y, h])
    for name, direction, seq, activation in [
        ("mil_rnn_forward_tanh", "forward", True, "tanh"),
        ("mil_rnn_reverse_relu", "reverse", True, "relu"),
        ("mil_rnn_reverse_sigmoid_last", "reverse", False, "sigmoid"),
        ("mil_rnn_hard_sigmoid", "forward", True, "sigmoid_hard"),
    ]:
        x, h0 = rand(t, b, i), rand(b, hid)
        w_ih, w_hh, bias = rand(hid, i), rand(hid, hid), rand(hid)
        out, h = rnn_direction(x, h0, w_ih, w_hh, bias, direction == "reverse", activation)
        y = out if seq else h[None]
        save_mil(name, dict(x=x, initial_h=h0),
                 lambda x, initial_h, w_ih=w_ih, w_hh=w_hh, bias=bias, direction=direction, seq=seq, a=activation:
                 mb.rnn(x=x, initial_h=initial_h, weight_ih=w_ih, weight_hh=w_hh, bias=bias, direction=direction,
                        output_sequence=seq, activation=a),
                 [y, h])


def mil_gru_reset_after_cases():
    """iOS 18 gru with reset_after against torch.nn.GRU (PyTorch stacks [r, z, n], MIL [r, o, z])."""
    for name, t, b, i, hid in [("mil_gru_reset_after_torch", 5, 3, 4, 6), ("mil_gru_reset_after_torch_b1", 3, 1, 2, 3)]:
        torch.manual_seed(7)
        gru = torch.nn.GRU(i, hid)
        state = {k: v.detach().numpy() for k, v in gru.state_dict().items()}
        x, h0 = rand(t, b, i), rand(b, hid)
        with torch.no_grad():
            out, hn = gru(torch.from_numpy(x), torch.from_numpy(h0[None]))

        def rzn_to_ron(v):
            r, z, n = np.split(v, 3)
            return np.concatenate([r, n, z]).astype(np.float32)

        w_ih, w_hh = rzn_to_ron(state["weight_ih_l0"]), rzn_to_ron(state["weight_hh_l0"])
        b_i, b_h = rzn_to_ron(state["bias_ih_l0"]), rzn_to_ron(state["bias_hh_l0"])
        save_mil(name, dict(x=x, initial_h=h0),
                 lambda x, initial_h, w_ih=w_ih, w_hh=w_hh, b_i=b_i, b_h=b_h:
                 mb.gru(x=x, initial_h=initial_h, weight_ih=w_ih, weight_hh=w_hh, input_bias=b_i, bias=b_h,
                        reset_after=True, output_sequence=True),
                 [out.numpy(), hn.numpy()[0]], target=ct.target.iOS18)


# MARK: - PyTorch cases

class WithStates(torch.nn.Module):
    """Runs `layer` on (x, h0[, c0]) and returns its output and final states."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x, h0, c0=None):
        if c0 is None:
            y, h = self.layer(x, h0)
            return y, h
        y, (h, c) = self.layer(x, (h0, c0))
        return y, h, c


class OutputOnly(torch.nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return (self.layer(x)[0],)


def torch_cases():
    torch.manual_seed(2026)
    t, b, i, hid = 6, 2, 5, 4
    for name, layers, bidirectional, batch_first, bias in [
        ("torch_lstm", 1, False, False, True),
        ("torch_lstm_no_bias", 1, False, False, False),
        ("torch_lstm_bidirectional", 1, True, False, True),
        ("torch_lstm_two_layers", 2, False, False, True),
        ("torch_lstm_bidirectional_two_layers_batch_first", 2, True, True, True),
    ]:
        lstm = torch.nn.LSTM(i, hid, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                             bias=bias)
        d = 2 if bidirectional else 1
        x = rand(b, t, i) if batch_first else rand(t, b, i)
        save_torch(name, WithStates(lstm), dict(x=x, h0=rand(layers * d, b, hid), c0=rand(layers * d, b, hid)))
    lstm = torch.nn.LSTM(i, hid, batch_first=True)
    save_torch("torch_lstm_batch_first_zero_state", OutputOnly(lstm), dict(x=rand(b, t, i)))
    # coremltools lowers nn.GRU to a while_loop of its own ops (its gru differs from PyTorch's).
    for name, layers, bidirectional, batch_first in [
        ("torch_gru_while_loop", 1, False, False),
        ("torch_gru_while_loop_bidirectional_batch_first", 2, True, True),
    ]:
        gru = torch.nn.GRU(i, hid, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
        d = 2 if bidirectional else 1
        x = rand(b, t, i) if batch_first else rand(t, b, i)
        save_torch(name, WithStates(gru), dict(x=x, h0=rand(layers * d, b, hid)))
    for name, layers, nonlinearity, batch_first in [
        ("torch_rnn_tanh", 1, "tanh", False),
        ("torch_rnn_relu_two_layers", 2, "relu", False),
        ("torch_rnn_batch_first", 1, "tanh", True),
    ]:
        rnn = torch.nn.RNN(i, hid, num_layers=layers, nonlinearity=nonlinearity, batch_first=batch_first)
        x = rand(b, t, i) if batch_first else rand(t, b, i)
        save_torch(name, WithStates(rnn), dict(x=x, h0=rand(layers, b, hid)))


if __name__ == "__main__":
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    mil_lstm_cases()
    mil_gru_rnn_cases()
    mil_gru_reset_after_cases()
    torch_cases()
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"wrote {len(CASES)} cases to {OUT}")
