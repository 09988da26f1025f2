"""A length's two-part distribution where its stated high / mean is past any lognormal's (exp(z^2 / 2): 3.87 at p95):
a lognormal body of the requests up to the stated high length and a long-request component between it and the slot
(F5 of the MoE capacity planner's trial: chat and agent traffic is most requests short and a minority very long,
mean 1,000 with p95 6,000, a ratio of 6 no lognormal has).

The distribution (``LengthMixture``), given the mean m, the high length h at the percentile q (0.95 at p95) and the
slot T > h (the longest sequence memory is sized for):

- **Two components, shares q and 1 - q, split at h.** The body is a lognormal (mu, s) conditioned on x <= h, drawn
  by a share q of the requests; the long component is the same lognormal conditioned on h < x <= T, drawn by the
  other 1 - q. So exactly a share q is at most h: the q-quantile is h by construction, whatever mu, and no length
  is past T. (Neither share is a free parameter: the percentile fixes them. Each component is a lognormal
  truncated to its side of h; together they are the lognormal with its tail past h given the weight 1 - q, more
  than the lognormal's own 1 - F(h) wherever m is below the lognormal's reach.)
- **One shape, fixed: the fit's at the bound.** s is the shape of the one-piece fit ``planner.serving.load``
  makes at this h and T with the mean at the bound, m = h / exp(z^2 / 2) (the lognormal truncated at T there,
  ``length_fit``; z itself where the slot is too close to h for a truncated lognormal, and with no slot). The
  reason: at the bound the two-part distribution with mu solved is then that fit itself (a lognormal truncated at
  T whose q-quantile is h already puts the share q at most h), so the lengths drawn, the mean context a decode step
  reads and the batch cap do not jump as a stated ratio crosses the bound (trial 27 F12 asked as much of the
  truncated fit: 3,000 / p95 11,600 and 11,605 in a 15,400-token slot read 4,745 and 4,747 tokens in flight).
- **The log-location mu, solved.** The mean q E[x | x <= h] + (1 - q) E[x | h < x <= T] rises with mu (each
  conditioned lognormal does: a location family with a log-concave density keeps its order under truncation), from
  (1 - q) h as mu -> -inf (the body to 0 tokens, the long requests piled at h) to q h + (1 - q) T; mu is solved on
  it, on a = (ln h - mu) / s. Every m in between has exactly one mu, so every ratio h / m from the bound up to
  1 / (1 - q) (20 at p95) has a fit, short of a sliver: a is searched up to ``MAX_SPLIT_SCORE`` = 37 (the long
  component's inverse transform reads Phi(-a), 5.7e-300 there, still a float), where the ratio reached is just
  under 1 / (1 - q) (``mixture_ratio_bound``: about 1 / ((1 - q) (1 + s / 37)), 19.1 at p95 with s = z, 18.8 with
  s = 2.31, 19.97 in a slot 0.3% past h). Past 1 / (1 - q) no distribution of
  positive lengths fits: by Markov's inequality P(x > h) <= m / h, so h / m < 1 / (1 - q) for any (``LongTailError``
  there).

No traffic statistics set the shape: published chat traces (ShareGPT, LMSYS-Chat, Azure's LLM inference traces) are
read by this package only through the requests a benchmark drew from them (``planner.accuracy.datasets``); the
shape is the one the stated mean and percentile already fix at the bound, so the two-part distribution adds no
parameter a user did not state.

Pure math and numpy; imports nothing of planner. ``planner.serving.load`` fits and draws it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: The largest split score a = (ln h - mu) / s searched (Phi(-37) = 5.7e-300: the long component's inverse transform
#: still reads it as a float; Phi(-38) underflows to 0)
MAX_SPLIT_SCORE = 37.0
#: The least one searched (the body piled at h, the long requests at the slot: a mean above any stated past the bound)
MIN_SPLIT_SCORE = -40.0
#: The root finder's iterations on a at most (``scipy.optimize.brentq``; it converges in a few dozen)
_STEPS = 200


def _normal_cdf(x: float) -> float:
    """Phi(x) (``scipy.special.ndtr``: accurate far into the lower tail; imported when a mixture is first fitted)."""
    from scipy.special import ndtr

    return float(ndtr(x))


def _log_normal_cdf(x: float) -> float:
    """ln Phi(x) (``scipy.special.log_ndtr``: its asymptotic series in the far lower tail); -inf at x = -inf."""
    from scipy.special import log_ndtr

    return float(log_ndtr(x))


def _log_minus(a: float, b: float) -> float:
    """ln(e^a - e^b) for a > b (b may be -inf)."""
    return a if b == -math.inf else a + math.log1p(-math.exp(b - a))


def _log_interval(lo: float, hi: float) -> float:
    """ln(Phi(hi) - Phi(lo)) for lo < hi (hi may be inf): by the upper tails where lo > 0, where both Phi round to 1."""
    if lo > 0:
        return _log_minus(_log_normal_cdf(-lo), _log_normal_cdf(-hi))
    return _log_minus(_log_normal_cdf(hi), _log_normal_cdf(lo)) if math.isfinite(hi) else math.log(_normal_cdf(-lo))


def _normal_quantile(p: float) -> float:
    """Phi^-1(p) (``scipy.special.ndtri``), p held inside (0, 1) so the far tails stay finite."""
    from scipy.special import ndtri

    return float(ndtri(min(max(p, 1e-300), 1.0 - 1e-16)))


@dataclass(frozen=True)
class LengthMixture:
    """A length's two-part distribution (the module's docstring): a share ``1 - long_share`` from the lognormal
    (``mu``, ``s``) conditioned on x <= ``split_tokens`` (h), the rest from it conditioned on h < x <=
    ``upper_tokens`` (T). With a = (ln h - mu) / s, b = (ln T - mu) / s and q = 1 - ``long_share``:
    E[x^k] = exp(k mu + k^2 s^2 / 2) (q Phi(a - k s) / Phi(a) + (1 - q) (Phi(k s - a) - Phi(k s - b)) / Phi(-a) -
    Phi(-b))); the CDF q Phi((ln x - mu) / s) / Phi(a) up to h, q + (1 - q) (Phi(-a) - Phi(-y)) / (Phi(-a) -
    Phi(-b)) past it (y = (ln x - mu) / s), 1 from T."""

    mu: float
    s: float
    split_tokens: float
    long_share: float
    upper_tokens: float

    @property
    def truncated(self) -> bool:
        """No length past ``upper_tokens`` (drawn by inverse transform, as a truncated lognormal is)."""
        return True

    @property
    def kind(self) -> str:
        return "two-part mixture"

    @property
    def _a(self) -> float:
        return (math.log(self.split_tokens) - self.mu) / self.s

    @property
    def _b(self) -> float:
        return (math.log(self.upper_tokens) - self.mu) / self.s if math.isfinite(self.upper_tokens) else math.inf

    def _log_parts(self, k: int) -> tuple[float, float]:
        """ln of E[x^k] of the body and of the long component, each conditioned on its side of h."""
        a, b, s = self._a, self._b, self.s
        scale = k * self.mu + k * k * s * s / 2.0
        body = scale + _log_normal_cdf(a - k * s) - _log_normal_cdf(a)
        tail = _log_interval(a - k * s, b - k * s) - _log_interval(a, b)
        return body, scale + tail

    def moment(self, k: int) -> float:
        """E[x^k]: each component's, weighted by its share."""
        body, tail = self._log_parts(k)
        return (1.0 - self.long_share) * math.exp(body) + self.long_share * math.exp(tail)

    @property
    def mean_tokens(self) -> float:
        return self.moment(1)

    @property
    def half_second_moment_tokens(self) -> float:
        """E[x^2] / (2 E[x]): a length's mean part done in flight (as ``LengthFit``'s)."""
        return self.moment(2) / (2.0 * self.moment(1))

    @property
    def body_median_tokens(self) -> float:
        """The median of the body (the requests up to h): the q / 2-quantile."""
        return self.quantile_tokens((1.0 - self.long_share) / 2.0)

    @property
    def long_mean_tokens(self) -> float:
        """The mean of the long requests (those past h)."""
        return math.exp(self._log_parts(1)[1])

    def cdf(self, x: float) -> float:
        """P(length <= x), x in tokens (not rounded)."""
        if x <= 0:
            return 0.0
        if x >= self.upper_tokens:
            return 1.0
        q, y = 1.0 - self.long_share, (math.log(x) - self.mu) / self.s
        if x <= self.split_tokens:
            return q * math.exp(_log_normal_cdf(y) - _log_normal_cdf(self._a))
        return q + self.long_share * math.exp(_log_interval(self._a, y) - _log_interval(self._a, self._b))

    def quantile_tokens(self, p: float) -> float:
        """The p-quantile (0 < p < 1): the body's at p / q up to p = q (h at q), the long component's past it."""
        q = 1.0 - self.long_share
        if p <= q:
            return math.exp(self.mu + self.s * _normal_quantile(p / q * _normal_cdf(self._a)))
        v = (p - q) / self.long_share  # the long component's own quantile: its survival Phi(-y) falls linearly in v
        above = (1.0 - v) * _normal_cdf(-self._a) + v * (0.0 if math.isinf(self._b) else _normal_cdf(-self._b))
        return min(math.exp(self.mu - self.s * _normal_quantile(above)), self.upper_tokens)

    def draw(self, u: np.ndarray) -> np.ndarray:
        """Lengths at the uniform draws ``u`` (inverse transform: each u's quantile), in tokens, not rounded."""
        return np.fromiter((self.quantile_tokens(min(max(float(v), 1e-16), 1.0 - 1e-16)) for v in u), float)


def mixture_at(a: float, s: float, high_tokens: float, high_percentile: float, slot_tokens: float) -> LengthMixture:
    """The two-part distribution split at h = ``high_tokens`` with split score a = (ln h - mu) / s."""
    return LengthMixture(
        math.log(high_tokens) - s * a, s, float(high_tokens), 1.0 - high_percentile / 100.0, float(slot_tokens)
    )


def mixture_ratio_bound(high_tokens: float, high_percentile: float, slot_tokens: float, s: float) -> float:
    """The largest h / m the two-part distribution of shape s reaches (its mean least at a = ``MAX_SPLIT_SCORE``):
    just under Markov's 1 / (1 - q) (20 at p95)."""
    return high_tokens / mixture_at(MAX_SPLIT_SCORE, s, high_tokens, high_percentile, slot_tokens).mean_tokens


def mixture_fit(
    mean_tokens: float, high_tokens: float, high_percentile: float, slot_tokens: float, s: float
) -> LengthMixture | None:
    """The two-part distribution of shape s with mean m = ``mean_tokens`` whose q-quantile is h = ``high_tokens``
    within T = ``slot_tokens`` (the module's docstring: a solved by scipy.optimize.brentq on the mean, which falls as a rises); None where
    m is out of its reach (at most ``mixture_ratio_bound``'s ratio; at least q h + (1 - q) T's)."""
    m, h = float(mean_tokens), float(high_tokens)

    def mean(a: float) -> float:
        return mixture_at(a, s, h, high_percentile, slot_tokens).mean_tokens

    lo, hi = MIN_SPLIT_SCORE, MAX_SPLIT_SCORE
    if not mean(hi) <= m <= mean(lo):
        return None
    if mean(hi) == m or mean(lo) == m:
        return mixture_at(hi if mean(hi) == m else lo, s, h, high_percentile, slot_tokens)
    from scipy.optimize import brentq

    a = brentq(lambda a: mean(a) - m, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=_STEPS)
    return mixture_at(a, s, h, high_percentile, slot_tokens)
