#!/usr/bin/env python3
"""Reference LLRs for arena/tests/sprt.rs: fishtest's server/fishtest/stats/LLRcalc.py
(LLR_logistic, LLR_normalized) re-typed in plain Python, with bisection in place of
scipy.optimize.brentq. Counts are fishtest's order: [L, D, W] or [LL, LD, WL+DD, WD, WW].
Run: python3 arena/tests/data/sprt_reference.py
"""
import math

NELO_DIVIDED_BY_NT = 800 / math.log(10)


def secular(pdf):
    v = min(a for a, _ in pdf)
    w = max(a for a, _ in pdf)
    lo, hi = -1 / w + 1e-12, -1 / v - 1e-12
    f = lambda x: sum(p * a / (1 + x * a) for a, p in pdf)
    for _ in range(300):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def stats(pdf):
    s = sum(p * a for a, p in pdf)
    var = sum(p * (a - s) ** 2 for a, p in pdf)
    return s, var


def mle_expected(pdfhat, s):
    x = secular([(a - s, p) for a, p in pdfhat])
    return [(a, p / (1 + x * (a - s))) for a, p in pdfhat]


def mle_t_value(pdfhat, ref, s):
    n = len(pdfhat)
    pdf = [(a, 1 / n) for a, _ in pdfhat]
    for _ in range(100):
        prev = pdf
        mu, var = stats(pdf)
        sigma = var ** 0.5
        pdf1 = [(a - ref - s * sigma * (1 + ((mu - a) / sigma) ** 2) / 2, p) for a, p in pdfhat]
        x = secular(pdf1)
        pdf = [(pdfhat[i][0], pdfhat[i][1] / (1 + x * pdf1[i][0])) for i in range(n)]
        if max(abs(prev[i][1] - pdf[i][1]) for i in range(n)) < 1e-12:
            break
    return pdf


def results_to_pdf(results):
    results = [r if r != 0 else 1e-3 for r in results]
    n = sum(results)
    c = len(results)
    return n, [(i / (c - 1), results[i] / n) for i in range(c)]


def llr(pdf, p0, p1):
    return sum(pdf[i][1] * (math.log(p1[i][1]) - math.log(p0[i][1])) for i in range(len(pdf)))


def L(x):
    return 1 / (1 + 10 ** (-x / 400))


def llr_logistic(elo0, elo1, results):
    n, pdf = results_to_pdf(results)
    return n * llr(pdf, mle_expected(pdf, L(elo0)), mle_expected(pdf, L(elo1)))


def llr_normalized(nelo0, nelo1, results):
    nt0, nt1 = nelo0 / NELO_DIVIDED_BY_NT, nelo1 / NELO_DIVIDED_BY_NT
    if len(results) == 5:
        nt0, nt1 = nt0 * 2 ** 0.5, nt1 * 2 ** 0.5
    n, pdf = results_to_pdf(results)
    return n * llr(pdf, mle_t_value(pdf, 0.5, nt0), mle_t_value(pdf, 0.5, nt1))


if __name__ == "__main__":
    # fastchess app/tests/sprt_test.cpp cases; Stats(w, l, d) and Stats(ll, ld, wl, dd, wd, ww).
    tri = [((21404, 21184, 40708), 0.5, 2.5), ((57433, 57030, 106593), 0, 2)]
    for (w, l, d), e0, e1 in tri:
        print("logistic trinomial", (w, l, d), e0, e1, llr_logistic(e0, e1, [l, d, w]))
    pen = [((223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5), ((871, 26175, 55003, 980, 26678, 821), 0, 2)]
    for (ll, ld, wl, dd, wd, ww), e0, e1 in pen:
        print("logistic pentanomial", e0, e1, llr_logistic(e0, e1, [ll, ld, wl + dd, wd, ww]))
    ntri = [((36433, 36027, 68692), 0, 2), ((10871, 10650, 20431), -1.75, 0.25), ((0, 0, 16700), 0, 5)]
    for (w, l, d), e0, e1 in ntri:
        print("normalized trinomial", e0, e1, llr_normalized(e0, e1, [l, d, w]))
    npen = [((365, 16618, 36029, 200, 16974, 390), 0, 2), ((127, 4883, 10311, 401, 5150, 104), -1.75, 0.25),
            ((0, 0, 0, 0, 0, 104), 0, 5)]
    for (ll, ld, wl, dd, wd, ww), e0, e1 in npen:
        print("normalized pentanomial", e0, e1, llr_normalized(e0, e1, [ll, ld, wl + dd, wd, ww]))
    # A small hand-made case used in the tests.
    print("small penta [2,10,30,14,4] 0..5", llr_logistic(0, 5, [2, 10, 30, 14, 4]))
    print("small penta normalized [2,10,30,14,4] 0..5", llr_normalized(0, 5, [2, 10, 30, 14, 4]))
