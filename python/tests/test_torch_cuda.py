"""rnnc.torch on CUDA tensors: the library compiled for the cuda target,
against PyTorch in float64 on the CPU (the reference), and against itself
across remat policies, streams and a captured CUDA graph.

These tests need a GPU. Without one the module is skipped as a whole
with its reason; gpu/call2.sh runs it on a GPU machine. With
RNNC_TEST_CUDA_AS_CPU=1 (`./dev.sh test`, so CI) the module runs with the
CPU in place of the GPU: `CUDA` is the CPU device, and only the tests that
need a real GPU (streams, CUDA graph capture, a second device) are
skipped, so that breakage of the test code itself shows without a GPU.
"""

import os

import pytest
import torch

import rnnc.torch as rt

from helpers import (ALL_CELLS, LSTM_LIKE, POLICIES, assert_same_bits,
                     dropout_loss_and_grads, dropout_scale,
                     episodes_loss_and_grads, episodes_reference, inputs,
                     loss_and_grads, make_pair, next_seed, rel_err,
                     reset_inputs, run_in_threads)

# RNNC_TEST_CUDA_AS_CPU=1: every test below runs on the CPU in place of
# the GPU (the CPU library, the same references), but those marked
# needs_gpu.
AS_CPU = os.environ.get("RNNC_TEST_CUDA_AS_CPU") == "1"

if AS_CPU:
    CUDA = torch.device("cpu")
else:
    pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                    reason="no CUDA device")
    CUDA = torch.device("cuda", 0)


def needs_gpu(what):
    """Skips a test under RNNC_TEST_CUDA_AS_CPU=1 that `what` makes need a
    real GPU."""
    return pytest.mark.skipif(
        AS_CPU, reason=f"needs a real GPU ({what}); RNNC_TEST_CUDA_AS_CPU=1 "
                       f"runs the CPU in its place")


@pytest.fixture(autouse=True, scope="module")
def full_precision():
    """Full float32 GEMMs in the references."""
    saved = (torch.backends.cuda.matmul.allow_tf32,
             torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = \
        saved


def to_device(tensors, device, dtype=None):
    out = []
    for t in tensors:
        u = t.detach().to(device=device, dtype=dtype or t.dtype)
        out.append(u.requires_grad_(t.requires_grad))
    return out


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("batch_first", [False, True])
def test_matches_float64_reference(cell, L, batch_first):
    T, B, I, H = 9, 5, 7, 6
    ours, ref = make_pair(cell, I, H, L, batch_first=batch_first)
    ours = ours.to(CUDA)
    ref = ref.double()
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L, batch_first)
    y, _, grads = loss_and_grads(cell, ours, *to_device((x, h0, c0), CUDA),
                                 gy.to(CUDA), ghn.to(CUDA))
    y_ref, _, grads_ref = loss_and_grads(
        cell, ref, *to_device((x, h0, c0), "cpu", torch.float64),
        gy.double(), ghn.double())
    assert y.device == CUDA
    assert rel_err(y.cpu().double(), y_ref) < 1e-5
    for g, g_ref in zip(grads, grads_ref):
        assert g.device == CUDA
        assert rel_err(g.cpu().double(), g_ref) < 1e-5


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_resets_match_episodes(cell):
    T, B, I, H, L = 8, 4, 5, 6, 2
    ours, ref = make_pair(cell, I, H, L)
    ours = ours.to(CUDA)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.zeros(T, B, dtype=torch.bool)
    is_init[0, 1] = is_init[3, 0] = is_init[3, 2] = is_init[4, 2] = True
    is_init[:, 3] = True
    with torch.no_grad():
        y, state = ours(x.to(CUDA), (h0.to(CUDA), c0.to(CUDA))
                        if cell in LSTM_LIKE else h0.to(CUDA),
                        is_init=is_init.to(CUDA))
        y_ref, h_ref, c_ref = episodes_reference(
            cell, ref.double(), x.double(), is_init, h0.double(), c0.double())
    h_n = state[0] if cell in LSTM_LIKE else state
    assert rel_err(y.cpu().double(), y_ref) < 1e-5
    assert rel_err(h_n.cpu().double(), h_ref) < 1e-5
    if cell in LSTM_LIKE:
        assert rel_err(state[1].cpu().double(), c_ref) < 1e-5


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_policies_bitwise_equal(cell):
    T, B, I, H, L = 7, 3, 5, 6, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    results = []
    for remat in POLICIES:
        ours, _ = make_pair(cell, I, H, L, remat=remat)
        ours = ours.to(CUDA)
        y, _, grads = loss_and_grads(cell, ours,
                                     *to_device((x, h0, c0), CUDA),
                                     gy.to(CUDA), ghn.to(CUDA))
        results.append([y.cpu()] + [g.cpu() for g in grads])
    for remat, other in zip(POLICIES[1:], results[1:]):
        for a, b in zip(results[0], other):
            assert torch.equal(a, b), remat


@needs_gpu("CUDA streams")
@pytest.mark.parametrize("cell", ALL_CELLS)
def test_runs_on_the_current_stream(cell):
    """A call on a side stream gives the same bits as on the default one,
    and its results are ready once that stream is."""
    T, B, I, H, L = 16, 8, 5, 6, 2
    ours, _ = make_pair(cell, I, H, L)
    ours = ours.to(CUDA)
    x = torch.randn(T, B, I, device=CUDA)
    with torch.no_grad():
        y_default, _ = ours(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y_side, _ = ours(x)
        side.synchronize()
    assert torch.equal(y_default.cpu(), y_side.cpu())


@needs_gpu("CUDA streams")
@pytest.mark.parametrize("wavefront", [False, True])
def test_threads_on_their_own_streams(wavefront):
    """One module trained from 4 threads at once, each on a CUDA stream of
    its own (the library shares one cuBLAS handle between them), gives
    every call's sequential outputs and gradients, bit for bit."""
    T, B, I, H, L = 12, 8, 5, 6, 3
    ours, _ = wavefront_pair("lstm", I, H, L, 4 * B, wavefront)
    cases = []
    for seed in range(4):
        x, h0, c0, gy, _ = inputs(T, B, I, H, L, seed=20 + seed)
        cases.append(to_device((x, h0, c0, gy), CUDA))
    # The module loads its kernels and cuBLAS starts on this thread first.
    ready = torch.cuda.current_stream()

    def run(case):
        stream = torch.cuda.Stream()
        stream.wait_stream(ready)
        with torch.cuda.stream(stream):
            x, h0, c0, gy = case
            y, _ = ours(x, (h0, c0))
            grads = torch.autograd.grad(y, [x, h0, c0, *ours.parameters()],
                                        gy)
            return [t.cpu() for t in (y, *grads)]

    sequential = [run(case) for case in cases]
    for want, got in zip(sequential, run_in_threads(run, cases)):
        assert all(torch.equal(a, b) for a, b in zip(want, got))


def capture(module, x):
    """A CUDA graph of `module(x)` without gradients, and its y, after a
    warm-up on a side stream, as torch.cuda.graphs asks (the module loads,
    cuBLAS starts)."""
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            module(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y, _ = module(x)
    return graph, y


def wavefront_pair(cell, I, H, L, rows, wavefront):
    """rnnc's module on CUDA with GEMM blocks of `rows` rows, its layers as
    a wavefront or not, and torch.nn's."""
    ours, ref = make_pair(cell, I, H, L)
    ours.gemm_rows, ours.wavefront = rows, wavefront
    return ours.to(CUDA), ref


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_wavefront_gives_the_same_bits(cell):
    """Three layers as a wavefront (each on a stream of its own, forked
    from the caller's and joined back) give the bits of the same GEMM
    blocks in sequence, within 1e-5 of torch.nn in float64."""
    T, B, I, H, L = 16, 8, 5, 6, 3
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    results = {}
    for name, wavefront in (("none", False), ("wavefront", True)):
        ours, ref = wavefront_pair(cell, I, H, L, 4 * B, wavefront)
        y, loss, grads = loss_and_grads(cell, ours,
                                        *to_device((x, h0, c0), CUDA),
                                        gy.to(CUDA), ghn.to(CUDA))
        results[name] = (y.cpu(), loss, [g.cpu() for g in grads])
    assert_same_bits(results)
    y_ref, _, grads_ref = loss_and_grads(
        cell, ref.double(), *to_device((x, h0, c0), "cpu", torch.float64),
        gy.double(), ghn.double())
    y, _, grads = results["wavefront"]
    assert rel_err(y.double(), y_ref) < 1e-5
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g.double(), g_ref) < 1e-5


@needs_gpu("torch.cuda.graph capture")
@pytest.mark.parametrize("wavefront", [False, True])
def test_captured_graph_replays_the_call(wavefront):
    """PyTorch can capture a call into a CUDA graph: the library issues
    everything on the capturing stream (a wavefront's lanes join the
    capture) and never synchronizes."""
    T, B, I, H, L = 8, 4, 5, 6, 2
    ours, _ = wavefront_pair("lstm", I, H, L, 2 * B, wavefront)
    x = torch.randn(T, B, I, device=CUDA)
    graph, y_graph = capture(ours, x)
    x.copy_(torch.randn(T, B, I, device=CUDA))
    graph.replay()
    with torch.no_grad():
        y_eager, _ = ours(x)
    assert torch.equal(y_graph.cpu(), y_eager.cpu())


@needs_gpu("torch.cuda.graph capture")
def test_captured_graph_draws_new_dropout_masks():
    """A training-mode call with dropout captured into a CUDA graph draws
    its seed on the device, so each replay drops other elements; the
    parameters and the input are the same, so only the masks differ."""
    T, B, I, H, L = 8, 4, 5, 6, 2
    ours, _ = make_pair("lstm", I, H, L, dropout=0.5)
    ours = ours.to(CUDA)
    x = torch.randn(T, B, I, device=CUDA)
    graph, y_graph = capture(ours, x)
    graph.replay()
    first = y_graph.cpu()
    graph.replay()
    second = y_graph.cpu()
    assert not torch.equal(first, second)


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("shape", [(9, 4, 5, 6, 2), (32, 64, 256, 256, 1)],
                         ids=["small", "wide"])
def test_graph_replay_gives_the_calls_results(cell, shape):
    """With graph replay on, training steps on the same buffers (replayed
    from the third on) give the bits of steps without it, each reading
    its input as it is then. The wide shape's weight gradients reduce
    over T·B = 2048 rows, where cuBLAS may choose split-K kernels that
    need the workspace an eager call has."""
    T, B, I, H, L = shape
    runs = []
    for calls in (0, 8):
        ours, _ = make_pair(cell, I, H, L, remat="chunk:4")
        ours = ours.to(CUDA)
        g = torch.Generator().manual_seed(3)
        x = torch.empty(T, B, I, device=CUDA)
        is_init = (torch.rand(T, B, generator=g) < 0.2).to(CUDA)
        run = []
        try:
            rt.set_graph_replay(calls)
            for _ in range(4):
                x.copy_(torch.randn(T, B, I, generator=g))
                ours.zero_grad(set_to_none=False)
                y, _ = ours(x, is_init=is_init)
                (y * y).sum().backward()
                run.append([y.detach().cpu()] +
                           [p.grad.cpu() for p in ours.parameters()])
        finally:
            rt.set_graph_replay(0)
        runs.append(run)
    for step_off, step_on in zip(*runs):
        for a, b in zip(step_off, step_on):
            assert torch.equal(a, b)


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_training_loop_matches_cpu(cell):
    """20 Adam steps on the GPU give the CPU library's losses."""
    T, B, I, H, L = 10, 6, 5, 8, 2
    losses = []
    for device in (torch.device("cpu"), CUDA):
        ours, _ = make_pair(cell, I, H, L, remat="chunk:3")
        ours = ours.to(device)
        opt = torch.optim.Adam(ours.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(5)
        x = torch.randn(T, B, I, generator=g).to(device)
        target = torch.randn(T, B, H, generator=g).to(device)
        is_init = (torch.rand(T, B, generator=g) < 0.2).to(device)
        run = []
        for _ in range(20):
            opt.zero_grad()
            y, _ = ours(x, is_init=is_init)
            loss = ((y - target) ** 2).mean()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    for a, b in zip(*losses):
        assert abs(a - b) <= 1e-4 * abs(b)


def test_saved_region_is_device_memory():
    T, B, I, H, L = 7, 3, 5, 6, 1
    ours, _ = make_pair("lstm", I, H, L, remat="gates")
    ours = ours.to(CUDA)
    x = torch.randn(T, B, I, device=CUDA, requires_grad=True)
    y, _ = ours(x)
    # Absent inputs (rng, h_reset, c_reset without dropout and reset
    # states) are saved as None.
    saved = [t for t in y.grad_fn.saved_tensors
             if t is not None and t.dtype == torch.uint8]
    assert len(saved) == 1 and saved[0].device == CUDA
    library = ours._library(T, B, CUDA, torch.float32, "zero").at(T, B)
    assert saved[0].numel() == library.saved_bytes > 0


@needs_gpu("a device other than the CPU")
def test_mixed_devices_are_an_error():
    ours, _ = make_pair("gru", 5, 6, 1)
    ours = ours.to(CUDA)
    with pytest.raises(rt.RNNCError, match="on one device"):
        ours(torch.randn(4, 2, 5, device=CUDA),
             torch.zeros(1, 2, 6))  # h0 on the CPU


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_dropout_masks_on_the_gpu(cell):
    """The GPU's dropout masks are Philox's (the float64 reference chained
    with the same masks), and the same under every policy."""
    T, B, I, H, L, p = 7, 3, 5, 6, 3, 0.4
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    seed = next_seed(11, CUDA)
    drops = [dropout_scale(T, B, H, p, k, seed).double() for k in range(L - 1)]
    _, ref = make_pair(cell, I, H, L)
    y_ref, _, grads_ref = dropout_loss_and_grads(
        cell, ref.double(), *to_device((x, h0, c0), "cpu", torch.float64),
        gy.double(), ghn.double(), drops)
    first = None
    # POLICIES' budget:9000 is below the smallest feasible budget of this
    # three-layer LSTM (10188 bytes, gates, on either target; none needs
    # 13236).
    for remat in POLICIES[:-1] + ["budget:12000"]:
        ours, _ = make_pair(cell, I, H, L, remat=remat, dropout=p)
        ours = ours.to(CUDA)
        torch.manual_seed(11)
        y, _, grads = loss_and_grads(cell, ours,
                                     *to_device((x, h0, c0), CUDA),
                                     gy.to(CUDA), ghn.to(CUDA))
        assert rel_err(y.cpu().double(), y_ref) < 1e-5, remat
        for g, g_ref in zip(grads, grads_ref):
            assert rel_err(g.cpu().double(), g_ref) < 1e-5, remat
        if first is None:
            first = (y, grads)
        assert torch.equal(y, first[0]), remat
        for g, g0 in zip(grads, first[1]):
            assert torch.equal(g, g0), remat


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("form", ["step", "column"])
def test_reset_states_on_the_gpu(cell, form):
    """Resets that enter given states: the GPU against the CPU library in
    float64, and every policy bitwise on the GPU."""
    T, B, I, H, L = 9, 4, 3, 5, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    hr, cr = reset_inputs(cell, T, B, H, L, form)
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(5)) \
        < 0.3
    leaves = [t for t in (x, h0, c0, hr, cr) if t is not None]
    results = {}
    for remat in ["none", "gates", "chunk:2"]:
        ours, _ = make_pair(cell, I, H, L, remat=remat)
        dx, dh0, dc0, dhr, *dcr = to_device(leaves, CUDA)
        results[remat] = loss_and_grads(
            cell, ours.to(CUDA), dx, dh0, dc0, gy.to(CUDA),
            ghn.to(CUDA), is_init.to(CUDA), dhr, dcr[0] if dcr else None)
    assert_same_bits(results)
    ref, _ = make_pair(cell, I, H, L)
    ref = ref.double()
    fx, fh0, fc0, fhr, *fcr = to_device(leaves, "cpu", torch.float64)
    y_ref, _, grads_ref = loss_and_grads(
        cell, ref, fx, fh0, fc0, gy.double(), ghn.double(), is_init, fhr,
        fcr[0] if fcr else None)
    y, _, grads = results["none"]
    assert rel_err(y.cpu().double(), y_ref) < 1e-5
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g.cpu().double(), g_ref) < 1e-5


@pytest.mark.parametrize("cell", ALL_CELLS)
def test_bf16_storage_on_the_gpu(cell):
    """bf16 storage through cuBLAS's bf16 GEMM: within 2e-2 of torch.nn in
    float64 with resets (as on the CPU), every policy bitwise equal."""
    T, B, I, H, L = 8, 3, 4, 5, 2
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(5)) \
        < 0.2
    results = {}
    for remat in ["none", "gates", "chunk:1", "chunk:3"]:
        ours, ref = make_pair(cell, I, H, L, remat=remat, storage="bf16")
        ours = ours.to(CUDA)
        y, _, grads = loss_and_grads(cell, ours,
                                     *to_device((x, h0, c0), CUDA),
                                     gy.to(CUDA), ghn.to(CUDA),
                                     is_init.to(CUDA))
        results[remat] = (y.cpu(), None, [g.cpu() for g in grads])
    assert_same_bits(results)
    y_ref, _, grads_ref = episodes_loss_and_grads(
        cell, ref.double(), x.double(), h0.double(), c0.double(),
        gy.double(), ghn.double(), is_init)
    y, _, grads = results["none"]
    assert rel_err(y.double(), y_ref) < 2e-2
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g.double(), g_ref) < 2e-2


@pytest.mark.parametrize("cell", ALL_CELLS)
@pytest.mark.parametrize("cast", [torch.bfloat16, torch.float16])
def test_autocast_on_the_gpu(cell, cast):
    """Under autocast on the device the results have torch.nn's dtypes on
    that device (bf16 autocast on CUDA: bfloat16, where cuDNN's float16
    is not what was asked for); bf16 autocast runs bf16 storage (within
    2e-2 of torch.nn in float64, as on the CPU), fp16 autocast computes in
    float32 (within 1e-5 before the results are rounded to float16, and
    of the gradients of the cotangents rounded to float16)."""
    if AS_CPU and cell in LSTM_LIKE and cast == torch.float16:
        pytest.skip("needs a real GPU: torch.nn.LSTM does not run under "
                    "the CPU's fp16 autocast (oneDNN has no such primitive)")
    T, B, I, H, L = 8, 3, 4, 5, 2
    ours, ref = make_pair(cell, I, H, L)
    ours = ours.to(CUDA)
    x, h0, c0, gy, ghn = inputs(T, B, I, H, L)
    is_init = torch.rand(T, B, generator=torch.Generator().manual_seed(5)) \
        < 0.2
    nn_cls = torch.nn.LSTM if cell in LSTM_LIKE else torch.nn.GRU
    xd, h0d, c0d = to_device((x, h0, c0), CUDA)
    with torch.autocast(CUDA.type, dtype=cast):
        # With the CPU in place of the GPU, torch.nn's LSTM autocasts
        # through oneDNN, which cannot build a bf16 LSTM on every CPU (on
        # AVX2 alone it raises): there it has no dtypes to compare with.
        try:
            want = nn_cls(I, H, L).to(CUDA)(xd.detach())
        except RuntimeError as e:
            if not AS_CPU or "primitive descriptor" not in str(e):
                raise
            want = None
        got = ours(xd.detach())
        y, _, grads = loss_and_grads(cell, ours, xd, h0d, c0d, gy.to(CUDA),
                                     ghn.to(CUDA), is_init.to(CUDA))
    flat = (lambda out: [out[0], *out[1]] if cell in LSTM_LIKE else
            list(out))
    if want is not None:
        wanted = [t.dtype for t in flat(want)]
        if CUDA.type == "cuda" and cast == torch.bfloat16:
            # torch.nn's cuDNN RNN computes in float16 under CUDA autocast
            # of any dtype (its autocast wrapper casts to half): under bf16
            # autocast rnnc returns what autocast asks for, bfloat16, as
            # torch.nn does on the CPU.
            assert wanted == [torch.float16] * len(wanted)
            wanted = [torch.bfloat16] * len(wanted)
        assert [t.dtype for t in flat(got)] == wanted
    # Results in float16 get their cotangents in float16: the gradients
    # are those of the cotangents rounded to float16 (the reference's too).
    cot = (lambda t: t.half().double()) if y.dtype == torch.float16 else \
        (lambda t: t.double())
    y_ref, _, grads_ref = episodes_loss_and_grads(
        cell, ref.double(), x.double(), h0.double(), c0.double(),
        cot(gy), cot(ghn), is_init)
    tol = 2e-2 if cast == torch.bfloat16 else 1e-5
    # fp16's rounding of y (2^-11 relative) bounds its comparison.
    assert rel_err(y.cpu().double(), y_ref) < max(tol, 2 ** -10)
    for g, g_ref in zip(grads, grads_ref):
        assert rel_err(g.cpu().double(), g_ref) < tol
    if want is None:
        pytest.skip("needs a real GPU for the dtypes: torch.nn.LSTM does "
                    "not run under the CPU's bf16 autocast on this CPU "
                    "(oneDNN builds no bf16 LSTM primitive); the values were "
                    "checked")


def shape_tensors(entry, T, B, layers):
    """The fused training entry point's inputs, parameters and cotangents
    (random, seeded by the shape) and its outputs and gradients (NaN), on
    CUDA."""
    gen = torch.Generator().manual_seed(T * 1000 + B)
    tensors = {}
    for arg in entry.args:
        if arg.name in tensors or arg.name == "arena":
            continue
        shape = ([layers] if arg.layer is not None else []) + list(arg.shape)
        if arg.dtype == "bool":
            tensor = torch.rand(shape, generator=gen) < 0.2
        elif arg.role in ("input", "parameter", "cotangent"):
            tensor = torch.randn(shape, generator=gen)
        else:
            tensor = torch.full(shape, float("nan"))
        tensors[arg.name] = tensor.to(CUDA)
    return tensors


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_library_of_every_shape_gives_the_bits_of_each_shape(cell):
    """The library of every T and B for the device (rnn-compile --dynamic)
    at T=1 and B=1, a tail GEMM block and a large batch: the fused
    training entry point's outputs and gradients are bitwise those of the
    library compiled for each shape (the same kernels and GEMM calls)."""
    from rnnc import _abi, _ops
    from rnnc.library import ENTRY_KINDS, compile_model
    I, H, L = 5, 7, 2

    def library(T, B):
        return compile_model(**_ops._request(
            cell, T, B, I, H, L, "none", CUDA, torch.float32, 0.0, "zero",
            None, 0, False), entries=ENTRY_KINDS)

    dynamic = library(None, None)
    assert dynamic.dynamic
    for T, B in ((1, 1), (9, 5), (33, 64)):
        results = []
        for lib in (dynamic.at(T, B), library(T, B)):
            tensors = shape_tensors(lib["train"], T, B, L)
            _abi._call(lib, "train", tensors, L, CUDA)
            results.append(tensors)
        written = [a.name for a in lib["train"].args
                   if a.role in ("output", "gradient")]
        for name in written:
            assert not results[1][name].isnan().any(), (T, B, name)
            assert torch.equal(results[0][name], results[1][name]), \
                (T, B, name)
