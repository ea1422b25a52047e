"""TorchRL's recurrent modules as a peer of rnn-run (gpu_vs_cudnn.py):
LSTMModule / GRUModule of TorchRL 0.14.1 in recurrent mode with
`recurrent_backend="triton"` (its Triton kernels that apply is_init inside
the time loop, CUDA only), computing what rnn-run and torch_peer.TorchStep
compute from the same arrays (torch_peer.make_inputs).

* available(backend): (True, description) or (False, why not).
* TorchRLStep(cell, d, device, backend): one train step: clear the
  gradients, the module's forward on a TensorDict, backward of y, h_n (and
  c_n) with the cotangents. TorchRL's data are batch-first, with the
  recurrent state stored per step: the caller's arrays (built once, not
  part of the step) are x [B, T, I], is_init [B, T, 1] and h (c) [B, T, L,
  H], which hold h0 (c0) at t = 0 and zeros elsewhere, so that an episode
  that starts at a reset starts from zero, as rnn-run's do; a column whose
  is_init[0] is set starts from zero as well. y, h_n and c_n are read from
  the module's outputs (h_n: the state it stores after the last step).
  configure(precision, compute_dtype) picks the module's
  `recurrent_matmul_precision` ("ieee": fp32, "tf32") and
  `recurrent_compute_dtype` (torch.float32 or torch.bfloat16); the modules
  share one nn.LSTM/GRU holding the weights of `d`.
  results() maps outputs and gradients back to rnn-run's names and
  time-major layouts (grad_h0 is the gradient reaching h[:, 0], zero in
  the columns that reset at t = 0, as rnn-run's).

On the CPU (gpu_vs_cudnn.py --dry-run) the same step runs with backend
"scan" (the per-step-state semantics of "triton"; needs hoptorch) or "pad"
(cuDNN's split-and-pad on torch.nn).

The wheels of torchrl and tensordict come with the GPU bundle
(gpu/make-bundle.sh; gpu/unpack.sh puts them on PYTHONPATH).
"""

import importlib.util

import numpy as np
import torch

WANT_VERSION = "0.14.1"

# The benchmark's modes as TorchRL's (recurrent_matmul_precision,
# recurrent_compute_dtype): fp32, TF32, and bf16 compute with TF32.
MODES = {"fp32": ("ieee", torch.float32), "tf32": ("tf32", torch.float32),
         "bf16": ("tf32", torch.bfloat16)}


def available(backend="triton"):
    """(True, what) if TorchRL's module with `backend` can run here, else
    (False, why not)."""
    try:
        import tensordict
        import torchrl
        from torchrl.modules.tensordict_module import rnn as trl_rnn
    except Exception as e:  # ImportError, or a broken install
        return False, f"cannot import torchrl/tensordict: " \
                      f"{type(e).__name__}: {e}"
    what = f"TorchRL {torchrl.__version__} (tensordict " \
           f"{tensordict.__version__}), recurrent_backend='{backend}'"
    if torchrl.__version__ != WANT_VERSION:
        what += f" [not {WANT_VERSION}]"
    if backend == "triton":
        if not getattr(trl_rnn, "_has_triton", False):
            return False, f"{what}: triton >= 2.2 is not installed"
        if not torch.cuda.is_available():
            return False, f"{what}: the triton backend needs CUDA"
        import triton
        what += f", triton {triton.__version__}"
    if backend == "scan" and importlib.util.find_spec("hoptorch") is None:
        return False, f"{what}: the scan backend needs hoptorch"
    return True, what


class TorchRLStep:
    """One train step of TorchRL's LSTMModule/GRUModule on the arrays `d`
    (see the header), on `device`."""

    def __init__(self, cell, d, device="cuda", backend="triton"):
        from tensordict import TensorDict
        self._TensorDict = TensorDict
        self.cell = cell
        self.lstm = cell == "lstm"
        self.backend = backend
        self.device = torch.device(device)
        T, B, I = d["x"].shape
        L, _, H = d["h0"].shape
        self.T, self.B, self.I, self.H, self.L = T, B, I, H, L
        ctor = torch.nn.LSTM if self.lstm else torch.nn.GRU
        self.rnn = ctor(I, H, num_layers=L, bias=True, batch_first=True,
                        dtype=torch.float32, device=self.device)
        with torch.no_grad():
            for name, p in self.rnn.named_parameters():
                p.copy_(torch.from_numpy(d[name]))
        dev = self.device

        def batch_first(a):
            return torch.from_numpy(np.ascontiguousarray(
                np.swapaxes(a, 0, 1))).to(dev)

        is_init = d["is_init"].astype(bool)                    # [T, B]
        self.reset_at_0 = torch.from_numpy(is_init[0].copy()).to(dev)

        def per_step(s0):
            # [L, B, H] -> [B, T, L, H]: s0 at t = 0 (zero where the column
            # resets there), zeros elsewhere.
            s = np.zeros((B, T, L, H), np.float32)
            s[:, 0] = np.where(is_init[0][:, None, None], 0.0,
                               np.swapaxes(s0, 0, 1))
            return torch.from_numpy(s).to(dev).requires_grad_(True)

        self.x = batch_first(d["x"]).requires_grad_(True)     # [B, T, I]
        self.h = per_step(d["h0"])
        self.c = per_step(d["c0"]) if self.lstm else None
        self.gy = batch_first(d["grad_y"])                     # [B, T, H]
        self.ghn = batch_first(d["grad_h_n"])                  # [B, L, H]
        self.gcn = batch_first(d["grad_c_n"]) if self.lstm else None
        fields = {"x": self.x, "h": self.h,
                  "is_init": batch_first(is_init).unsqueeze(-1)}
        if self.lstm:
            fields["c"] = self.c
        self.td = TensorDict(fields, batch_size=[B, T], device=dev)
        self.leaves = [self.x, self.h] + ([self.c] if self.lstm else []) \
            + list(self.rnn.parameters())
        self.modules = {}
        self.module = None
        self.configure()

    def configure(self, precision="ieee", compute_dtype=torch.float32):
        """Selects (building it once) the module with this recurrent
        matmul precision and compute dtype."""
        key = (precision, compute_dtype)
        if key not in self.modules:
            from torchrl.modules import GRUModule, LSTMModule
            kwargs = dict(recurrent_backend=self.backend,
                          default_recurrent_mode=True)
            if self.backend == "triton":
                kwargs.update(recurrent_matmul_precision=precision,
                              recurrent_compute_dtype=compute_dtype)
            if self.lstm:
                m = LSTMModule(lstm=self.rnn, in_keys=["x", "h", "c"],
                               out_keys=["y", ("next", "h"), ("next", "c")],
                               **kwargs)
            else:
                m = GRUModule(gru=self.rnn, in_keys=["x", "h"],
                              out_keys=["y", ("next", "h")], **kwargs)
            self.modules[key] = m
        self.module = self.modules[key]

    def clear_grads(self):
        for p in self.leaves:
            p.grad = None

    def _outputs(self):
        # A shallow copy: the module writes its outputs into it.
        out = self.module(self.td.clone(False))
        y = out.get("y")
        h_n = out.get(("next", "h"))[:, -1]                    # [B, L, H]
        c_n = out.get(("next", "c"))[:, -1] if self.lstm else None
        return y, h_n, c_n

    def step(self):
        self.clear_grads()
        y, h_n, c_n = self._outputs()
        outs, cots = [y, h_n], [self.gy, self.ghn]
        if self.lstm:
            outs.append(c_n)
            cots.append(self.gcn)
        torch.autograd.backward(outs, cots)
        return y, h_n, c_n

    def results(self):
        """rnn-run's arrays (names and time-major layouts) as numpy."""
        y, h_n, c_n = self.step()
        keep = (~self.reset_at_0).to(torch.float32)[:, None, None]

        def first_state(g):
            # [B, T, L, H] -> [L, B, H]: the gradient reaching h0 (c0).
            return (g[:, 0] * keep).transpose(0, 1)

        r = {"y": y.transpose(0, 1), "h_n": h_n.transpose(0, 1),
             "grad_x": self.x.grad.transpose(0, 1),
             "grad_h0": first_state(self.h.grad)}
        if self.lstm:
            r.update(c_n=c_n.transpose(0, 1),
                     grad_c0=first_state(self.c.grad))
        for name, p in self.rnn.named_parameters():
            r[f"grad_{name}"] = p.grad
        return {k: (v.detach().float().cpu().numpy() if v is not None
                    else np.zeros(1, np.float32)) for k, v in r.items()}
