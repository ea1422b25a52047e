"""Prints a model file of N chained GRU layers (T = 2, B = 1, I = H = 2),
named as rnn-run reads them: stacked-model.py N."""

import sys


def main(n):
    t, b, h = 2, 1, 2
    seq = f"tensor<{t}x{b}x{h}xf32>"
    state = f"tensor<{b}x{h}xf32>"
    w, bias = f"tensor<{3 * h}x{h}xf32>", f"tensor<{3 * h}xf32>"
    args = [f'%x: {seq} {{rnn.name = "x"}}',
            f'%r: tensor<{t}x{b}xi1> {{rnn.name = "is_init"}}']
    body, results = [], []
    y = "%x"
    for k in range(n):
        args.append(f'%h{k}: {state} {{rnn.name = "h0", rnn.layer = {k} : i64}}')
        for name in ("weight_ih", "weight_hh"):
            args.append(f'%{name}{k}: {w} {{rnn.name = "{name}_l{k}"}}')
        for name in ("bias_ih", "bias_hh"):
            args.append(f'%{name}{k}: {bias} {{rnn.name = "{name}_l{k}"}}')
        body.append(
            f"  %y{k}, %hn{k} = rnn.gru {y} reset %r state(%h{k}) "
            f"weights(%weight_ih{k}, %weight_hh{k}, %bias_ih{k}, %bias_hh{k})"
            f" : ({seq}, tensor<{t}x{b}xi1>, {state}, {w}, {w}, {bias}, "
            f"{bias}) -> ({seq}, {state})")
        y = f"%y{k}"
    results = [(y, seq, '{rnn.name = "y"}')] + [
        (f"%hn{k}", state, f'{{rnn.name = "h_n", rnn.layer = {k} : i64}}')
        for k in range(n)]
    print("func.func @stacked(" + ", ".join(args) + ") -> (" +
          ", ".join(f"{t_} {a}" for _, t_, a in results) + ") {")
    print("\n".join(body))
    print("  return " + ", ".join(v for v, _, _ in results) + " : " +
          ", ".join(t_ for _, t_, _ in results))
    print("}")


if __name__ == "__main__":
    main(int(sys.argv[1]))
