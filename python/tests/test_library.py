"""rnnc.library's public functions given bad input: a library directory
whose manifest is hand-edited or of another version, a device that is no
GPU ordinal, an entry point called with pointers that are no buffers,
precompile and clear_cache given the wrong types. Each is one RNNCError
naming what is wrong, never a crash; and the entry points called through
rnnc.library compute what torch.nn.LSTM computes.

Needs `rnn-compile` (RNNC_COMPILE or PATH)."""

import copy
import ctypes
import json
import shutil
import subprocess

import numpy as np
import pytest

from rnnc import library
from rnnc.library import RNNCError

LSTM = ["--preset=lstm", "--seq-len=4", "--batch=2", "--input-size=3",
        "--hidden-size=5"]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """`rnn-compile -o` directories by name: a static LSTM, one of its
    inference entry point alone, and a dynamic one."""
    try:
        compiler = library.find_compiler()
    except RNNCError as e:
        pytest.skip(str(e))
    root = tmp_path_factory.mktemp("libraries")
    made = {}
    for name, flags in (("static", LSTM),
                        ("infer-only", LSTM + ["--entries=infer"]),
                        ("dynamic", ["--preset=lstm", "--input-size=3",
                                     "--hidden-size=5", "--dynamic"])):
        subprocess.run([compiler, *flags, "-o", str(root / name)],
                       check=True, capture_output=True, timeout=300)
        made[name] = root / name
    return made


def edited(good, directory, edit):
    """A copy of the library directory `good` at `directory` whose
    manifest `edit` (a function of the manifest) changed."""
    shutil.copytree(good, directory)
    with open(good / "manifest.json") as f:
        manifest = json.load(f)
    manifest = copy.deepcopy(manifest)
    edit(manifest)
    with open(directory / "manifest.json", "w") as f:
        json.dump(manifest, f)
    return str(directory)


def setter(*path, value):
    def edit(manifest):
        node = manifest
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def test_hand_edited_manifest_is_refused_naming_it(compiled, tmp_path):
    """A manifest rnn-compile does not write is one RNNCError naming the
    manifest and the part that is wrong, before its library is loaded:
    a library elsewhere than beside it, an unknown target, an entry point
    of an unknown kind or with another kind's symbol (whose arguments the
    library would read past), an argument without sizes, a saved layout
    of no offsets, a version it does not speak."""
    cases = [
        (setter("library", value="../static/librnnc_model.so"),
         "\"library\" must be the name of a file beside the manifest"),
        (setter("target", value="tpu"), "unknown target 'tpu'"),
        (lambda m: m["entries"].__setitem__("bogus", m["entries"]["fwd"]),
         "a malformed entry point 'bogus': an unknown kind"),
        (setter("entries", "infer", "symbol", value="rnnc_lstm_bwd"),
         "a malformed entry point 'infer': its symbol must be 'rnnc_lstm'"),
        (setter("entries", "infer", "args", value={}),
         "\"args\" must be a list of arguments"),
        (setter("entries", "infer", "args", 0, "shape", value=[-4, 2, 3]),
         r"argument 0 \(x\): shape must be a list of sizes"),
        (setter("entries", "infer", "args", 0, "role", value="bogus"),
         r"argument 0 \(x\): unknown role 'bogus'"),
        (setter("entries", "infer", "args", 2, "layer", value=1),
         r"argument 2 \(h0\): layer must be a layer index below the "
         r"model's L=1"),
        (setter("entries", "fwd", "saved_bytes", value=3),
         "its saved argument saved has shape \\[800\\], its saved_bytes 3"),
        (setter("entries", "fwd", "saved", value=[{"role": "gates"}]),
         "\"saved\" must list values with the offset and bytes"),
        (setter("entries", value={}), "no entry points"),
        (lambda m: m.pop("shape"), "\"shape\" must give the sizes"),
        (setter("abi_version", value=2),
         "ABI version 2 with dynamic False; this package speaks ABI "
         "version 1 .* and 2 with dynamic true"),
    ]
    for i, (edit, message) in enumerate(cases):
        directory = edited(compiled["static"], tmp_path / str(i), edit)
        with pytest.raises(RNNCError, match=str(tmp_path / str(i)) +
                           "/manifest.json: .*" + message):
            library.load(directory)
    # The library without a forward has no saved region to size.
    with pytest.raises(RNNCError, match="has no entry point 'fwd'"):
        library.load(str(compiled["infer-only"])).saved_bytes


def test_manifest_other_than_the_librarys_is_refused(compiled, tmp_path):
    """A manifest that rnn-compile could have written but whose content is
    not the one the library holds (rnnc_manifest) is refused when the
    library is loaded, before an entry point reads buffers by its argument
    lists: arguments dropped, added or reordered, an entry point left out,
    another library's manifest. The same manifest written otherwise (other
    indentation) loads."""
    def drop(manifest):
        for entry in manifest["entries"].values():
            entry["args"].pop(2)

    def add(manifest):
        for entry in manifest["entries"].values():
            entry["args"].insert(2, dict(entry["args"][2]))

    def swap(manifest):
        args = manifest["entries"]["infer"]["args"]
        args[3], args[4] = args[4], args[3]

    def other(manifest):
        with open(compiled["infer-only"] / "manifest.json") as f:
            manifest.clear()
            manifest.update(json.load(f))

    cases = [("static", "fewer", drop), ("static", "more", add),
             ("static", "swapped", swap), ("dynamic", "fewer", drop),
             ("dynamic", "more", add),
             ("static", "no-fwd", lambda m: m["entries"].pop("fwd")),
             ("static", "other", other)]
    for good, name, edit in cases:
        directory = edited(compiled[good], tmp_path / f"{good}-{name}", edit)
        with pytest.raises(RNNCError, match=str(tmp_path) + f"/{good}-{name}"
                           r"/manifest.json is not the manifest .*/"
                           r"librnnc_model.so was compiled with"):
            library.load(directory)
    # A library that holds no manifest (its symbol renamed here, as in a
    # library of an older rnn-compile) is refused as such.
    older = edited(compiled["static"], tmp_path / "older", lambda m: None)
    path = tmp_path / "older" / "librnnc_model.so"
    data = path.read_bytes()
    assert data.count(b"rnnc_manifest\0") >= 1
    path.write_bytes(data.replace(b"rnnc_manifest\0", b"rnnc_manifesX\0"))
    with pytest.raises(RNNCError, match=r"older/librnnc_model.so holds no "
                       r"manifest \(rnnc_manifest\): a library of an older "
                       r"rnn-compile"):
        library.load(older)
    same = edited(compiled["static"], tmp_path / "same", lambda m: None)
    assert library.load(same).manifest == library.load(
        str(compiled["static"])).manifest


def test_device_must_be_a_gpu_ordinal(compiled):
    """A device that is no GPU ordinal (a string, a bool, a float, a
    negative number or one past int32) is an RNNCError naming it, not a
    value that a context is made for later; a cpu library takes None
    only, and compile_model says so before it compiles."""
    for device, error in (("cuda:0", TypeError), (True, TypeError),
                          (1.5, TypeError), (-1, ValueError),
                          (2 ** 40, ValueError)):
        with pytest.raises(RNNCError, match="device must be a GPU ordinal"):
            library.load(str(compiled["static"]), device)
        with pytest.raises(error):
            library.load(str(compiled["static"]), device)
    with pytest.raises(RNNCError, match="no GPU to choose"):
        library.load(str(compiled["static"]), 0)
    with pytest.raises(ValueError, match="device=0 chooses a GPU, which a "
                       "library for target 'cpu' has not"):
        library.compile_model("lstm", 4, 2, 3, 5, 1, device=0)


def test_entry_point_refuses_pointers_that_are_no_buffers(compiled):
    """Null, a string or a float where an entry point takes an address,
    and a stream that is no address, are an RNNCError naming the buffer
    (by index and manifest name), not a segmentation fault."""
    entry = library.load(str(compiled["static"]))["infer"]
    buffers = [ctypes.create_string_buffer(max(a.nbytes, 1))
               for a in entry.args]
    pointers = [ctypes.addressof(b) for b in buffers]
    entry.call(pointers)
    for bad, message in ((None, "is null"), (0, "is null"),
                         ("x", "must be an address"),
                         (1.5, "must be an address")):
        with pytest.raises(RNNCError, match=r"rnnc_lstm: buffer 3 "
                           r"\(c0\[0\]:float32\[2, 5\]\) " + message):
            entry.call(pointers[:3] + [bad] + pointers[4:])
    with pytest.raises(TypeError, match="stream must be the address"):
        entry.call(pointers, stream="stream")
    with pytest.raises(RNNCError, match="takes 12 buffers, got 11"):
        entry.call(pointers[:-1])


def test_entry_points_compute_torch_nn_lstm(compiled):
    """infer, fwd and bwd, called with buffers in the manifest's order,
    give torch.nn.LSTM's outputs and gradients (float64 reference)."""
    torch = pytest.importorskip("torch")
    lib = library.load(str(compiled["static"]))
    torch.manual_seed(0)
    ref = torch.nn.LSTM(3, 5).double()
    x = torch.randn(4, 2, 3, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(1, 2, 5, dtype=torch.float64, requires_grad=True)
    c0 = torch.randn(1, 2, 5, dtype=torch.float64, requires_grad=True)
    y, (hn, cn) = ref(x, (h0, c0))
    gy, ghn, gcn = (torch.randn_like(t) for t in (y, hn, cn))
    leaves = [x, h0, c0, *ref.parameters()]
    grads = torch.autograd.grad((y * gy).sum() + (hn * ghn).sum() +
                                (cn * gcn).sum(), leaves)
    values = dict(x=x, is_init=torch.zeros(4, 2, dtype=torch.bool),
                  h0=h0[0], c0=c0[0], grad_y=gy, grad_h_n=ghn[0],
                  grad_c_n=gcn[0], **dict(ref.named_parameters()))
    expected = dict(y=y, h_n=hn[0], c_n=cn[0])
    expected.update({"grad_" + n: g for n, g in zip(
        ["x", "h0", "c0"] + [n for n, _ in ref.named_parameters()], grads)})
    arrays = {}

    def call(kind):
        entry = lib[kind]
        buffers = []
        for arg in entry.args:
            dtype = {"float32": np.float32, "bool": np.bool_,
                     "uint8": np.uint8}[arg.dtype]
            if arg.role in ("input", "parameter", "cotangent"):
                array = np.ascontiguousarray(
                    values[arg.name].detach().numpy().astype(dtype))
            elif kind == "bwd" and arg.name in ("y", "saved"):
                array = arrays[arg.name]   # the forward's
            else:
                array = np.full(arg.shape, np.nan if dtype == np.float32
                                else 255, dtype)
                arrays[arg.name] = array
            assert array.nbytes == arg.nbytes
            buffers.append(array)
        entry.call([b.ctypes.data for b in buffers])

    call("infer")
    for name in ("y", "h_n", "c_n"):
        np.testing.assert_allclose(arrays[name], expected[name].detach(),
                                   atol=1e-5)
    call("fwd")
    call("bwd")
    for name, want in expected.items():
        want = want.detach()
        np.testing.assert_allclose(arrays[name], want.reshape(
            arrays[name].shape), atol=1e-5, err_msg=name)


def test_precompile_and_clear_cache_refuse_the_wrong_types(tmp_path):
    """precompile given one request (a string or a dict) rather than a
    list, or a request that is neither a dict nor a sequence, and
    clear_cache given no path, are a TypeError naming what they got."""
    for requests in ("cell=lstm", dict(cell="lstm")):
        with pytest.raises(TypeError, match="precompile takes a list of "
                           "requests"):
            library.precompile(requests, str(tmp_path))
    with pytest.raises(TypeError, match="a request is a dict of "
                       "compile_model's arguments or a sequence of them in "
                       "order, got None"):
        library.precompile([None], str(tmp_path))
    with pytest.raises(TypeError, match="the cache directory must be a "
                       "path or None, got 5"):
        library.clear_cache(5)
