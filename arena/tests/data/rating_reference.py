#!/usr/bin/env python3
"""Independent reference values for arena/tests/rating.rs.

Maximum-likelihood ratings of Ordo's default model (logistic Elo curve, draws = half a win, no
white advantage), computed with a different algorithm from arena's Newton solver: Hunter's
MM / Zermelo fixed-point iteration for the Bradley-Terry model,
    pi_i <- S_i / sum_j n_ij / (pi_i + pi_j),   r_i = 400 log10(pi_i),
where S_i are i's points and n_ij the games between i and j. Standard errors: the inverse of
the observed information with the reference fixed, inverted by Gauss-Jordan elimination.
Plain Python, no dependencies. Run: python3 arena/tests/data/rating_reference.py
"""
import math

LN10 = math.log(10)
BETA = LN10 / 400


def mle(players, matches, iters=200000, tol=1e-15):
    """matches: list of (a, b, wins_a, draws, losses_a). Returns ratings with mean 0."""
    idx = {p: k for k, p in enumerate(players)}
    n = len(players)
    games = [[0.0] * n for _ in range(n)]
    pts = [0.0] * n
    for a, b, w, d, l in matches:
        i, j = idx[a], idx[b]
        games[i][j] += w + d + l
        games[j][i] += w + d + l
        pts[i] += w + d / 2
        pts[j] += l + d / 2
    pi = [1.0] * n
    for _ in range(iters):
        new = []
        for i in range(n):
            den = sum(games[i][j] / (pi[i] + pi[j]) for j in range(n) if j != i)
            new.append(pts[i] / den)
        # normalise (geometric mean 1)
        g = math.exp(sum(math.log(x) for x in new) / n)
        new = [x / g for x in new]
        delta = max(abs(math.log(a) - math.log(b)) for a, b in zip(new, pi))
        pi = new
        if delta < tol:
            break
    r = [400 * math.log10(x) for x in pi]
    return r, games, pts


def expected(ri, rj):
    return 1 / (1 + 10 ** ((rj - ri) / 400))


def invert(m):
    n = len(m)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(m)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        piv = a[c][c]
        a[c] = [x / piv for x in a[c]]
        for r in range(n):
            if r != c:
                f = a[r][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [row[n:] for row in a]


def errors(r, games, anchor=None):
    """95% errors (1.96 SE) relative to `anchor` (index) or to the pool average (None)."""
    n = len(r)
    fixed = 0 if anchor is None else anchor
    free = [k for k in range(n) if k != fixed]
    info = [[0.0] * len(free) for _ in free]
    for a, i in enumerate(free):
        for j in range(n):
            if j == i:
                continue
            e = expected(r[i], r[j])
            w = BETA * BETA * games[i][j] * e * (1 - e)
            info[a][a] += w
            if j in free:
                info[a][free.index(j)] -= w
    cov_free = invert(info)
    cov = [[0.0] * n for _ in range(n)]
    for a, i in enumerate(free):
        for b, j in enumerate(free):
            cov[i][j] = cov_free[a][b]
    out = []
    for k in range(n):
        if anchor is not None:
            var = cov[k][k]
        else:
            v = [(1.0 if m == k else 0.0) - 1.0 / n for m in range(n)]
            var = sum(v[x] * cov[x][y] * v[y] for x in range(n) for y in range(n))
        out.append(1.959963984540054 * math.sqrt(max(var, 0.0)))
    return out


CASES = {
    "three": (
        ["A", "B", "C"],
        [("A", "B", 20, 50, 10), ("A", "C", 40, 40, 5), ("B", "C", 25, 50, 15)],
    ),
    "four": (
        ["A", "B", "C", "D"],
        [
            ("A", "B", 12, 30, 8),
            ("A", "C", 30, 20, 10),
            ("B", "C", 10, 40, 10),
            ("B", "D", 25, 15, 5),
            ("C", "D", 20, 20, 20),
            ("D", "A", 3, 7, 20),
        ],
    ),
}

if __name__ == "__main__":
    for name, (players, matches) in CASES.items():
        r, games, pts = mle(players, matches)
        print(f"case {name}")
        err_pool = errors(r, games)
        err_anchor = errors(r, games, anchor=0)
        for k, p in enumerate(players):
            exp_pts = sum(games[k][j] * expected(r[k], r[j]) for j in range(len(players)) if j != k)
            print(
                f"  {p}: pool {r[k]:.6f} ±{err_pool[k]:.6f}   anchor {players[0]}=0: "
                f"{r[k] - r[0]:.6f} ±{err_anchor[k]:.6f}   points {pts[k]} expected {exp_pts:.9f}"
            )
    # Perfect winner P over case "three": 6-0 against A, 4-0 against C. Ordo's floor for P is
    # the rating scoring 9.5/10 against the fixed A and C.
    r, _, _ = mle(*CASES["three"])
    ra, rc = r[0], r[2]
    lo, hi = -5000.0, 5000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 6 * expected(mid, ra) + 4 * expected(mid, rc) < 9.5:
            lo = mid
        else:
            hi = mid
    print(f"perfect winner floor (pool average of A,B,C = 0): {lo:.6f}")
