"""Quantiles of the exponentially modified Gaussian (EMG) for tests/emg_quantiles.rs.

X = N(mu, sigma^2) + Exp(lam). With z = (x - mu) / sigma and u = lam * sigma, its CDF is
F(x) = Phi(z) - exp(u^2/2 - u z) Phi(z - u). The quantile x(p) solves F(x) = p; here with
mpmath at 60 digits (findroot from scipy's estimate) for each p as the f64 the
tests pass, rounded to f64 and printed as Rust literals for the
tests. Run: python tools/emg_quantiles.py (needs mpmath and scipy).
"""
import mpmath as mp
from scipy.stats import exponnorm

mp.mp.dps = 60


def cdf(x, mu, sigma, lam):
    z = (x - mu) / sigma
    u = lam * sigma
    return mp.ncdf(z) - mp.exp(u * u / 2 - u * z) * mp.ncdf(z - u)


def quantile(p, mu, sigma, lam):
    guess = exponnorm.ppf(float(p), 1.0 / (sigma * lam), loc=mu, scale=sigma)
    return mp.findroot(lambda x: cdf(x, mp.mpf(mu), mp.mpf(sigma), mp.mpf(lam)) - p, mp.mpf(guess))


PS = ["1e-10", "1e-4", "0.05", "0.5", "0.9", "0.999", "0.9999999"]
for (mu, sigma, lam) in [(0.0, 1.0, 0.5), (2.0, 0.5, 3.0)]:
    # p as the f64 the tests pass (0.9999999 is 5e-17 off in f64, which moves the
    # quantile by 1e-9 where the density is 5e-8).
    xs = [quantile(mp.mpf(float(p)), mu, sigma, lam) for p in PS]
    print(f"// mu = {mu}, sigma = {sigma}, lam = {lam}; p = {', '.join(PS)}")
    print("[" + ", ".join(repr(float(x)) for x in xs) + "]")
