"""Seeded samplers of test inputs: random, structured and exact.

Float samplers return float64 NumPy arrays (a backend rounds them on conversion); exact
samplers return object arrays of SymPy rationals. Everything takes a NumPy Generator, so a
seed reproduces every case.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from orthoverify.backends import get_backend
from orthoverify.errors import DomainError, SingularError
from orthoverify.param._validate import integer, matrix, size


def haar_orthogonal(rng: np.random.Generator, n: int) -> np.ndarray:
    """A Haar-distributed orthogonal matrix (QR of a Gaussian matrix, signs fixed; Mezzadri 2007)."""
    n = size(n, "n")
    if n == 0:
        return np.zeros((0, 0))
    z = rng.standard_normal((n, n))
    q, r = np.linalg.qr(z)
    return q * np.sign(np.diag(r))


def haar_orthogonal_det(rng: np.random.Generator, n: int, det: int) -> np.ndarray:
    """A Haar-distributed orthogonal matrix of determinant ``det`` (+1 or -1): :func:`haar_orthogonal`
    with its first column negated when its determinant has the other sign."""
    if integer(det, "det") not in (1, -1):
        raise DomainError(f"det must be 1 or -1, got {det}")
    q = haar_orthogonal(rng, size(n, "n", minimum=1))  # the 0 x 0 matrix has det 1 and no column to negate
    if (np.linalg.det(q) > 0) != (det > 0):
        q[:, 0] = -q[:, 0]
    return q


def cayley(a: np.ndarray) -> np.ndarray:
    """``(I - A)(I + A)^-1`` for skew-symmetric A: orthogonal, with no eigenvalue -1."""
    a = matrix(get_backend("numpy-float64"), a, "A", square=True)
    n = a.shape[0]
    eye = np.eye(n)
    try:
        out = np.linalg.solve((eye + a).T, (eye - a).T).T
    except np.linalg.LinAlgError:
        raise SingularError("I + A is singular (A is not skew-symmetric)") from None
    if not np.all(np.isfinite(out)):
        raise SingularError("I + A is numerically singular: its solve gave NaN or Inf")
    return out


def random_skew(rng: np.random.Generator, n: int, scale: float = 1.0) -> np.ndarray:
    """A skew-symmetric matrix with N(0, scale^2) entries above the diagonal."""
    n = size(n, "n")
    g = rng.standard_normal((n, n)) * scale
    return np.triu(g, 1) - np.triu(g, 1).T


def near_identity(rng: np.random.Generator, n: int, delta: float) -> np.ndarray:
    """An orthogonal matrix within about ``delta`` of I (Cayley transform of a small skew matrix)."""
    n = size(n, "n")
    return cayley(random_skew(rng, n, delta))


def random_permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random permutation matrix."""
    n = size(n, "n")
    return np.eye(n)[rng.permutation(n)]


def random_signs(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random diagonal sign matrix."""
    n = size(n, "n")
    return np.diag(rng.choice([-1.0, 1.0], size=n))


def random_signed_permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random signed permutation matrix: random signs times a random permutation (in that order
    of draws)."""
    return random_signs(rng, n) @ random_permutation(rng, n)


def reflection_vectors(rng: np.random.Generator, n: int, m: int, *, log10_range: float = 0.0) -> np.ndarray:
    """``U`` of eq. 9 (n x m, column j zero above row j) with Gaussian entries; each column is
    scaled by 10^s, s uniform in [-log10_range, log10_range] (reflections are scale-invariant,
    so large and tiny columns must give the same matrix)."""
    n = size(n, "n")
    m = size(m, "m")
    if m > n:
        raise DomainError(f"m = {m} reflection vectors for n = {n}: need m <= n")
    u = np.tril(rng.standard_normal((n, m)))
    if log10_range > 0 and m > 0:
        u = u * 10.0 ** rng.uniform(-log10_range, log10_range, size=m)
    for j in range(m):  # a zero column is outside the domain of eq. 6: redraw its pivot
        if not np.any(u[j:, j]):
            u[j, j] = 1.0
    return u


def reflection_sizes(n: int, *, include_square: bool = False) -> list[int]:
    """Numbers of reflections m to try for size n: 1, about n/2, n - 1 (and n when asked)."""
    n = size(n, "n")
    ms = sorted({m for m in (1, n // 2, n - 1) if 1 <= m <= n - 1})
    if include_square and n >= 1:
        ms.append(n)
    return ms


def upper_positive(rng: np.random.Generator, n: int) -> np.ndarray:
    """A well-conditioned upper-triangular matrix with positive diagonal."""
    n = size(n, "n")
    r = np.triu(rng.standard_normal((n, n))) / max(n, 1) ** 0.5
    np.fill_diagonal(r, 1.0 + rng.uniform(0.0, 1.0, size=n))
    return r


# ----------------------------------------------------------------------------- exact samplers
def rational_skew(rng: np.random.Generator, n: int, bound: int = 3) -> np.ndarray:
    """A skew-symmetric object matrix of small integers (SymPy Integers)."""
    n = size(n, "n")
    import sympy

    a = np.full((n, n), sympy.Integer(0), dtype=object)
    for i in range(n):
        for j in range(i + 1, n):
            v = sympy.Integer(int(rng.integers(-bound, bound + 1)))
            a[i, j], a[j, i] = v, -v
    return a


def rational_orthogonal(rng: np.random.Generator, n: int, *, det: int = 1) -> np.ndarray:
    """An exactly orthogonal matrix with rational entries and determinant ``det``: the Cayley
    transform of an integer skew matrix (determinant 1; I + A is invertible for skew A) times a
    random signed permutation of the required sign."""
    n = size(n, "n")
    import sympy

    a = sympy.Matrix(rational_skew(rng, n))
    eye = sympy.eye(n)
    q = (eye - a) * (eye + a).inv()
    perm = rng.permutation(n)
    signs = [int(s) for s in rng.choice([-1, 1], size=n)]
    sp = np.zeros((n, n))
    for i, j in enumerate(perm):
        sp[i, j] = signs[i]
    if round(np.linalg.det(sp)) != det:
        signs[0] = -signs[0]
    p = sympy.Matrix(n, n, lambda i, j: signs[i] if perm[i] == j else 0)
    return np.array((q * p).tolist(), dtype=object)


def rational_upper(rng: np.random.Generator, n: int, bound: int = 4) -> np.ndarray:
    """An upper-triangular object matrix of small integers with positive diagonal."""
    n = size(n, "n")
    import sympy

    r = np.full((n, n), sympy.Integer(0), dtype=object)
    for i in range(n):
        r[i, i] = sympy.Integer(int(rng.integers(1, bound + 1)))
        for j in range(i + 1, n):
            r[i, j] = sympy.Integer(int(rng.integers(-bound, bound + 1)))
    return r


def rational_matrix(rng: np.random.Generator, n: int, m: int, bound: int = 6, max_den: int = 4) -> np.ndarray:
    """An n x m object matrix of rationals p/q, |p| <= bound, 1 <= q <= max_den (SymPy)."""
    n, m = size(n, "n"), size(m, "m")
    bound, max_den = integer(bound, "bound", minimum=0), integer(max_den, "max_den", minimum=1)
    import sympy

    return np.array(
        [
            [sympy.Rational(int(rng.integers(-bound, bound + 1)), int(rng.integers(1, max_den + 1))) for _ in range(m)]
            for _ in range(n)
        ],
        dtype=object,
    )


def rational_vectors(rng: np.random.Generator, n: int, m: int, bound: int = 5) -> np.ndarray:
    """``U`` of eq. 9 with small nonzero-column integer entries (SymPy Integers)."""
    n = size(n, "n")
    m = size(m, "m")
    bound = integer(bound, "bound", minimum=1)
    if m > n:
        raise DomainError(f"m = {m} reflection vectors for n = {n}: need m <= n")
    import sympy

    u = np.full((n, m), sympy.Integer(0), dtype=object)
    for j in range(m):
        while True:
            col = [int(rng.integers(-bound, bound + 1)) for _ in range(n - j)]
            if any(col):
                break
        for i, v in enumerate(col):
            u[j + i, j] = sympy.Integer(v)
    return u


def signed_permutations(n: int) -> Iterator[np.ndarray]:
    """Every n x n signed permutation matrix (2^n n! of them), as float64 arrays."""
    n = size(n, "n")
    for perm in itertools.permutations(range(n)):
        for signs in itertools.product((1.0, -1.0), repeat=n):
            p = np.zeros((n, n))
            for i, j in enumerate(perm):
                p[i, j] = signs[i]
            yield p


def quarter_turns(n: int, *, odd_one: bool = False) -> np.ndarray:
    """2 x 2 quarter-turn blocks [[0, -1], [1, 0]] down the diagonal (and, when ``odd_one``, a
    trailing 1 for odd n; else a zero row and column there): orthogonal with eigenvalues +-i, where
    the scaled Cayley bound max|a_ij| <= 1 is attained."""
    n = size(n, "n")
    quarter = np.zeros((n, n))
    for k in range(0, n - 1, 2):
        quarter[k, k + 1], quarter[k + 1, k] = -1.0, 1.0
    if odd_one and n % 2:
        quarter[n - 1, n - 1] = 1.0
    return quarter


def dct_orthogonal(n: int) -> np.ndarray:
    """The orthonormal DCT-II matrix: a dense structured orthogonal matrix (n >= 1)."""
    n = size(n, "n", minimum=1)
    k, j = np.arange(n)[:, None], np.arange(n)[None, :]
    m = np.cos(np.pi * (2 * j + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    m[0] /= np.sqrt(2.0)
    return m


# ----------------------------------------------------------------------------- complex samplers
def haar_unitary(rng: np.random.Generator, n: int) -> np.ndarray:
    """A Haar-distributed unitary matrix (QR of a complex Gaussian matrix, phases fixed)."""
    n = size(n, "n")
    if n == 0:
        return np.zeros((0, 0), dtype=complex)
    z = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))) / np.sqrt(2)
    q, r = np.linalg.qr(z)
    d = np.diag(r)
    return q * (d / np.abs(d))


def structured_unitaries(rng: np.random.Generator, n: int) -> list[tuple[str, np.ndarray]]:
    """Unitaries with structure that general-position samples miss: diagonal phases (with a
    repeated phase), a permutation, a permutation with phases, the identity, -I, a real
    orthogonal matrix, a matrix near the identity, and one whose first column starts with 0."""
    n = size(n, "n")
    ph = np.exp(1j * rng.uniform(-np.pi, np.pi, n))
    if n > 1:
        ph[1] = ph[0]
    perm = np.eye(n)[rng.permutation(n)]
    a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    skew_h = (a - a.conj().T) * 1e-6
    eye = np.eye(n)
    near = np.linalg.solve(eye + skew_h, eye - skew_h)
    out = [
        ("phases", np.diag(ph)),
        ("permutation", perm.astype(complex)),
        ("phased-permutation", perm * ph),
        ("identity", eye.astype(complex)),
        ("minus-identity", -eye.astype(complex)),
        ("real-orthogonal", haar_orthogonal(rng, n).astype(complex)),
        ("near-identity", near),
    ]
    if n > 1:
        anti = np.eye(n)[::-1].astype(complex)  # every column's first entry is 0 but the last
        out.append(("anti-diagonal", anti * ph))
    return out


def rational_unitary(rng: np.random.Generator, n: int, bound: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """An exactly unitary matrix with Gaussian-rational entries, as (real part, imaginary part)
    object arrays of SymPy rationals: the Cayley transform (I - A)(I + A)^-1 of a skew-Hermitian
    A with small integer parts (I + A is invertible: A's eigenvalues are imaginary)."""
    n = size(n, "n")
    import sympy

    a = sympy.zeros(n, n)
    for i in range(n):
        a[i, i] = sympy.I * int(rng.integers(-bound, bound + 1))
        for j in range(i + 1, n):
            v = int(rng.integers(-bound, bound + 1)) + sympy.I * int(rng.integers(-bound, bound + 1))
            a[i, j] = v
            a[j, i] = -sympy.conjugate(v)
    eye = sympy.eye(n)
    q = ((eye - a) * (eye + a).inv()).applyfunc(sympy.expand)
    re = np.array([[sympy.re(q[i, j]) for j in range(n)] for i in range(n)], dtype=object)
    im = np.array([[sympy.im(q[i, j]) for j in range(n)] for i in range(n)], dtype=object)
    return re, im
