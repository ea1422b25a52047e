"""rnnc.flax against Flax's own cells: a stack of Flax's GRUCell or
OptimizedLSTMCell scanned over time with the state reset by `jnp.where`
before each step, as PureJaxRL's ScannedRNN does, is the reference for
rnnc.flax's modules on the converted parameters: outputs, final states,
and the gradients of the Flax parameters (through `convert`) and of the
inputs. The modules' own parameters, carry and dropout stream.

Needs flax, jax and rnn-compile (RNNC_COMPILE or PATH)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

nn = pytest.importorskip("flax.linen")

import rnnc.flax as rf  # noqa: E402
import rnnc.jax as rj  # noqa: E402

T, B, I, H = 7, 4, 3, 5

FLAX_CELLS = {"lstm": nn.OptimizedLSTMCell, "gru": nn.GRUCell}


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.abs(b).max()
    return np.abs(a - b).max() / (scale if scale else 1.0)


def flax_reference(cell, layers, params, x, resets, carry):
    """The layers of Flax's cell one after another, each scanned over
    time, the carry zeroed where `resets` is set (PureJaxRL's
    ScannedRNN); `carry` in rnnc's form, `(h,)` or `(h, c)` of [L, B, H].
    Returns y and the final carry in rnnc's form."""
    finals = []
    for k in range(layers):
        module = FLAX_CELLS[cell](features=H)
        # Flax's LSTM carry is (c, h).
        state = (carry[1][k], carry[0][k]) if cell == "lstm" else carry[0][k]

        def body(state, inputs, k=k, module=module):
            xt, reset = inputs
            state = jax.tree_util.tree_map(
                lambda s: jnp.where(reset[:, None], jnp.zeros_like(s), s),
                state)
            state, y = module.apply(params[k], state, xt)
            return state, y
        state, x = jax.lax.scan(body, state, (x, resets))
        finals.append((state[1], state[0]) if cell == "lstm" else (state,))
    return x, tuple(jnp.stack([f[i] for f in finals])
                    for i in range(len(finals[0])))


def flax_params(cell, layers, key):
    params = []
    for k in range(layers):
        key, sub = jax.random.split(key)
        module = FLAX_CELLS[cell](features=H)
        width = I if k == 0 else H
        carry = module.initialize_carry(sub, (B, width))
        params.append(module.init(sub, carry,
                                  jnp.zeros((B, width), jnp.float32)))
    return params


def data(cell, layers, seed=1):
    keys = jax.random.split(jax.random.PRNGKey(seed), 4)
    # float32 also where another test module enables jax_enable_x64.
    x = jax.random.normal(keys[0], (T, B, I), jnp.float32)
    resets = np.zeros((T, B), bool)
    resets[0, 0] = resets[2, 0] = resets[3, 0] = True
    resets[:, 1] = True
    resets[T // 2, B - 1] = True
    states = 2 if cell == "lstm" else 1
    carry = tuple(jax.random.normal(keys[1 + i], (layers, B, H), jnp.float32)
                  for i in range(states))
    return x, jnp.asarray(resets), carry, jax.random.normal(
        keys[3], (T, B, H), jnp.float32)


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_converted_flax_cells_give_the_same_function(cell, layers):
    """rnnc.flax on `convert` of Flax's cells' parameters computes what
    the cells scanned with resets compute, and its gradients of the Flax
    parameters and of x and the carry are theirs (float32, within 1e-5
    relative)."""
    params = flax_params(cell, layers, jax.random.PRNGKey(0))
    x, resets, carry, w = data(cell, layers)
    module = {"lstm": rf.LSTM, "gru": rf.GRU}[cell](hidden_size=H,
                                                   num_layers=layers)

    def ours(params, x, carry):
        converted = rf.convert(params, cell)
        state, y = module.apply({"params": converted}, carry, (x, resets))
        return y, state

    def theirs(params, x, carry):
        return flax_reference(cell, layers, params, x, resets, carry)

    def loss(run):
        def f(params, x, carry):
            y, state = run(params, x, carry)
            return (y * w).sum() + sum((s * s).sum() for s in state)
        return f

    y, state = ours(params, x, carry)
    y_ref, state_ref = theirs(params, x, carry)
    assert rel(y, y_ref) < 1e-5
    for s, s_ref in zip(state, state_ref):
        assert rel(s, s_ref) < 1e-5
    grads = jax.grad(loss(ours), argnums=(0, 1, 2))(params, x, carry)
    want = jax.grad(loss(theirs), argnums=(0, 1, 2))(params, x, carry)
    for (path, g), g_ref in zip(jax.tree_util.tree_leaves_with_path(grads),
                                jax.tree_util.tree_leaves(want)):
        assert g.shape == g_ref.shape, path
        assert rel(g, g_ref) < 1e-5, (path, rel(g, g_ref))


@pytest.mark.parametrize("module", [rf.LSTM, rf.GRU, rf.MGU, rf.CIFG])
def test_module_parameters_carry_and_call(module):
    """The parameters are torch.nn's names and shapes drawn within
    1/sqrt(H); the carry is the cell's states of [L, B, H]; a call is
    rnnc.jax.rnn on the module's parameters."""
    rnn = module(hidden_size=H, num_layers=2)
    carry = rnn.initialize_carry(B)
    cell = rnn._cell
    gates = {"lstm": 4, "gru": 3, "mgu": 2, "cifg": 3}[cell]
    assert [c.shape for c in carry] == [(2, B, H)] * (
        2 if cell in ("lstm", "cifg") else 1)
    x, resets, _, _ = data("gru", 2)
    variables = rnn.init(jax.random.PRNGKey(0), carry, (x, resets))
    params = variables["params"]
    assert sorted(params) == sorted(
        f"{kind}_l{k}" for k in range(2)
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    assert params["weight_ih_l0"].shape == (gates * H, I)
    assert params["weight_ih_l1"].shape == (gates * H, H)
    bound = 1 / np.sqrt(H)
    assert all(float(jnp.abs(p).max()) <= bound
               for p in jax.tree_util.tree_leaves(params))
    state, y = rnn.apply(variables, carry, (x, resets))
    y_fn, state_fn = rj.rnn(dict(params), x, resets, carry, cell=cell)
    assert np.array_equal(np.asarray(y), np.asarray(y_fn))
    for a, b in zip(state, state_fn):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_dropout_draws_from_the_dropout_stream():
    """With dropout the module draws its masks from the "dropout" RNG
    stream (rnnc.jax.rnn's masks for that key), and drops nothing when
    deterministic."""
    rnn = rf.LSTM(hidden_size=H, num_layers=3, dropout=0.4)
    x, resets, _, _ = data("lstm", 3)
    carry = rnn.initialize_carry(B)
    variables = rnn.init(jax.random.PRNGKey(0), carry, (x, resets),
                         deterministic=True)
    key = jax.random.PRNGKey(5)
    _, y = rnn.apply(variables, carry, (x, resets), deterministic=False,
                     rngs={"dropout": key})
    y_fn, _ = rj.rnn(dict(variables["params"]), x, resets, carry,
                     cell="lstm", dropout=0.4, rng=_dropout_key(key))
    assert np.array_equal(np.asarray(y), np.asarray(y_fn))
    _, kept = rnn.apply(variables, carry, (x, resets), deterministic=True)
    plain, _ = rj.rnn(dict(variables["params"]), x, resets, carry,
                      cell="lstm")
    assert np.array_equal(np.asarray(kept), np.asarray(plain))
    assert not np.array_equal(np.asarray(kept), np.asarray(y))
    with pytest.raises(Exception, match="dropout"):
        rnn.apply(variables, carry, (x, resets), deterministic=False)


def _dropout_key(key):
    """The key a top-level module's first make_rng("dropout") gives in an
    apply with rngs={"dropout": key}."""
    class Probe(nn.Module):
        @nn.compact
        def __call__(self):
            return self.make_rng("dropout")
    return Probe().apply({}, rngs={"dropout": key})


def test_convert_refuses_other_trees():
    with pytest.raises(ValueError, match="not a Flax gru cell's"):
        rf.convert({"params": {"ii": {"kernel": jnp.zeros((2, 2))}}}, "gru")
    with pytest.raises(ValueError, match="cell 'lstm' or 'gru'"):
        rf.convert({}, "mgu")
    with pytest.raises(ValueError, match="no layer's parameters"):
        rf.convert([], "gru")
    with pytest.raises(TypeError, match="layer 0: a Flax cell's parameters "
                                        "are a dict, got str"):
        rf.convert("params", "gru")
    # Two layers of different hidden sizes are not one stack.
    layers = [flax_params("gru", 1, jax.random.PRNGKey(0))[0],
              nn.GRUCell(features=H + 1).init(jax.random.PRNGKey(1),
                                              jnp.zeros((2, H + 1)),
                                              jnp.zeros((2, H)))]
    with pytest.raises(ValueError, match=rf"layer 1: weight_ih of shape "
                                         rf"\[{3 * H + 3}, {H}\], not "
                                         rf"\[{3 * H + 3}, {H + 1}\]"):
        rf.convert(layers, "gru")


def test_module_sizes_and_carry_are_checked():
    """Bad sizes of a module, a carry other than its num_layers and
    hidden_size, and inputs other than (x, resets) are one error naming
    them."""
    x, resets = jnp.zeros((3, 2, 4)), jnp.zeros((3, 2), bool)
    key = jax.random.PRNGKey(0)
    for size, error, message in ((0, ValueError, "hidden_size must be "
                                  "positive, got 0"),
                                 (5.0, TypeError, "hidden_size must be an "
                                  "int, got 5.0")):
        with pytest.raises(error, match=message):
            rf.GRU(hidden_size=size).init(key, (jnp.zeros((1, 2, 5)),),
                                          (x, resets))
    with pytest.raises(ValueError, match="num_layers must be positive"):
        rf.GRU(hidden_size=5, num_layers=0).initialize_carry(2)
    gru = rf.GRU(hidden_size=5, num_layers=2)
    # NumPy's integers are sizes as Python's are: the same function.
    numpy_sized = rf.GRU(hidden_size=np.int64(5), num_layers=np.int32(2))
    x32 = (x + 1).astype(jnp.float32)  # float32 under jax_enable_x64 too
    carry = gru.initialize_carry(2)
    variables = gru.init(key, carry, (x32, resets))
    expected = gru.apply(variables, carry, (x32, resets))
    got = numpy_sized.apply(variables, numpy_sized.initialize_carry(2),
                            (x32, resets))
    for a, b in zip(jax.tree_util.tree_leaves(got),
                    jax.tree_util.tree_leaves(expected)):
        np.testing.assert_array_equal(a, b)
    for carry in ((jnp.zeros((1, 2, 5)),), (jnp.zeros((2, 2, 6)),)):
        with pytest.raises(ValueError, match=r"carry h must be \[num_layers"
                                             r", B, hidden_size\] = \[2, B, "
                                             r"5\] of this GRU, got"):
            gru.init(key, carry, (x, resets))
    with pytest.raises(TypeError, match="tuple of 2 arrays"):
        rf.LSTM(hidden_size=5).init(key, (jnp.zeros((1, 2, 5)),),
                                    (x, resets))
    # x alone, of T = 2 too (which would unpack into two steps).
    for alone in (x, x[:2]):
        with pytest.raises(TypeError, match=r"the inputs of GRU are a pair "
                                             r"\(x, resets\)"):
            gru.init(key, gru.initialize_carry(2), alone)


def test_dropout_and_deterministic_are_checked():
    """A dropout rate outside [0, 1) is refused whether or not the call
    drops (in evaluation too, and with one layer, which drops nothing);
    a traced deterministic flag is one error naming it; so is an x of
    other than three axes (not parameters of its last axis' width)."""
    x, resets = jnp.zeros((3, 2, 4), jnp.float32), jnp.zeros((3, 2), bool)
    key = jax.random.PRNGKey(0)
    for layers in (1, 2):
        rnn = rf.GRU(hidden_size=5, num_layers=layers, dropout=1.5)
        with pytest.raises(ValueError, match=r"dropout must be a "
                                             r"probability in \[0, 1\), "
                                             r"got 1.5"):
            rnn.init(key, rnn.initialize_carry(2), (x, resets),
                     deterministic=True)
    rnn = rf.GRU(hidden_size=5, num_layers=2, dropout=0.3)
    carry = rnn.initialize_carry(2)
    variables = rnn.init(key, carry, (x, resets), deterministic=True)
    with pytest.raises(TypeError, match="GRU: deterministic must be a "
                                        "bool"):
        jax.jit(lambda d: rnn.apply(variables, carry, (x, resets),
                                    deterministic=d,
                                    rngs={"dropout": key}))(True)
    with pytest.raises(ValueError, match=r"x of GRU must be \[T, B, I\], "
                                         r"got shape \[3, 2\]"):
        rnn.apply(variables, carry, (x[..., 0], resets), deterministic=True)


def test_convert_refuses_gates_that_are_not_dense_layers():
    """A gate without a 2-D kernel, a bias of another width than its
    kernel's, kernels reading inputs of different widths, and a list
    under "params" are one error naming the layer and the gate."""
    good = flax_params("gru", 1, jax.random.PRNGKey(0))[0]["params"]

    def edited(gate, dense):
        return {"params": {**good, gate: dense}}
    with pytest.raises(ValueError, match=r"layer 0: gate hz is not a Flax "
                                         r"Dense's parameters .*got \{\}"):
        rf.convert(edited("hz", {}), "gru")
    with pytest.raises(ValueError, match=r"gate ir is not a Flax Dense's "
                                         r".*got \{kernel: \[12\]\}"):
        rf.convert(edited("ir", {"kernel": jnp.zeros(12)}), "gru")
    with pytest.raises(ValueError, match=r"gate hz is not a Flax Dense's "
                                         r".*got list"):
        rf.convert(edited("hz", [jnp.zeros((H, H))]), "gru")
    with pytest.raises(ValueError, match=rf"layer 0: gate in's bias has "
                                         rf"shape \[{H + 1}\], its kernel "
                                         rf"\[{I}, {H}\]"):
        rf.convert(edited("in", {"kernel": good["in"]["kernel"],
                                 "bias": jnp.zeros(H + 1)}), "gru")
    with pytest.raises(ValueError, match=rf"layer 0: the kernels of gates "
                                         rf"ir, iz, in read inputs of "
                                         rf"different widths \[{I}, "
                                         rf"{I + 1}\]"):
        rf.convert(edited("iz", {"kernel": jnp.zeros((I + 1, H)),
                                 "bias": jnp.zeros(H)}), "gru")
    with pytest.raises(TypeError, match="layer 0: a Flax cell's parameters "
                                        "are a dict, got list under "
                                        "'params'"):
        rf.convert({"params": [good]}, "gru")


def test_float64_parameters_need_x64():
    """A module of param_dtype float64 without jax_enable_x64 is one
    error saying so, not float32 parameters (JAX's warning and
    truncation)."""
    rnn = rf.GRU(hidden_size=5, param_dtype=jnp.float64)
    with jax.enable_x64(False):
        x, resets = jnp.zeros((3, 2, 4)), jnp.zeros((3, 2), bool)
        with pytest.raises(ValueError, match="GRU: param_dtype float64 "
                                             "needs jax_enable_x64"):
            rnn.init(jax.random.PRNGKey(0), (jnp.zeros((1, 2, 5)),),
                     (x, resets))
        with pytest.raises(ValueError, match="GRU: param_dtype float64 "
                                             "needs jax_enable_x64"):
            rnn.initialize_carry(2)
        with pytest.raises(ValueError, match="GRU.initialize_carry: dtype "
                                             "float64 needs jax_enable_x64"):
            rf.GRU(hidden_size=5).initialize_carry(2, jnp.float64)
    with pytest.raises(ValueError, match="GRU: param_dtype must be float32 "
                                         "or float64, got bfloat16"):
        rf.GRU(hidden_size=5, param_dtype=jnp.bfloat16).init(
            jax.random.PRNGKey(0), (jnp.zeros((1, 2, 5), jnp.float32),),
            (jnp.zeros((3, 2, 4), jnp.float32), jnp.zeros((3, 2), bool)))


def test_dropout_with_one_layer_warns_that_nothing_is_dropped():
    """A module of one layer with dropout drops nothing (rnnc.jax.rnn's
    output without dropout), and warns that it does not, as rnnc.torch's
    modules do."""
    x, resets, carry, _ = data("gru", 1)
    rnn = rf.GRU(hidden_size=H, dropout=0.3)
    with pytest.warns(UserWarning, match="GRU: dropout applies between "
                                         "layers: with num_layers=1"):
        variables = rnn.init(jax.random.PRNGKey(0), carry, (x, resets),
                             deterministic=False)
        _, y = rnn.apply(variables, carry, (x, resets), deterministic=False,
                         rngs={"dropout": jax.random.PRNGKey(1)})
    want, _ = rj.rnn(dict(variables["params"]), x, resets, carry, cell="gru")
    assert np.array_equal(np.asarray(y), np.asarray(want))


def test_x_of_another_dtype_than_param_dtype_names_it():
    """Under jax_enable_x64 an x of float64 (JAX's default there) with a
    module of param_dtype float32 is one error naming param_dtype, which
    the parameters come from, not one about a weight the user never
    made."""
    rnn = rf.GRU(hidden_size=5)
    with jax.enable_x64(True):
        x, resets = jnp.zeros((3, 2, 4), jnp.float64), jnp.zeros((3, 2), bool)
        with pytest.raises(ValueError, match="x of GRU is float64, its "
                                             "param_dtype float32"):
            rnn.init(jax.random.PRNGKey(0), rnn.initialize_carry(2),
                     (x, resets))
        wide = rf.GRU(hidden_size=5, param_dtype=jnp.float64)
        _, y = wide.apply(wide.init(jax.random.PRNGKey(0),
                                    wide.initialize_carry(2), (x, resets)),
                          wide.initialize_carry(2), (x, resets))
        assert y.dtype == jnp.float64
