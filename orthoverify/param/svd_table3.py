"""Table 3 (App. C) of svdRNN (Zhang, Lei & Dhillon, ICML 2018) reconstructed: the printed
parameter counts, the counts a counting convention gives (n_h = 32, Sec. 4's formulas of
:mod:`orthoverify.param.svd`), and every convention of a small family that reproduces a row.
"""

from __future__ import annotations

from typing import Any

from orthoverify.param import svd

# name, length, classes, depth, RNN, LSTM, oRNN, svdRNN (App. C, Table 3)
TABLE3: tuple[tuple[str, int, int, int, int, int, int, int], ...] = (
    ("50words", 270, 50, 27, 3058, 7218, 2426, 2850),
    ("Adiac", 176, 37, 16, 2694, 6950, 2062, 2486),
    ("ArrowHead", 251, 3, 251, 1219, 4515, 587, 1011),
    ("Beef", 470, 5, 47, 1606, 5766, 974, 1398),
    ("BeetleFly", 512, 2, 32, 1699, 6435, 1067, 1491),
    ("CBF", 128, 3, 16, 1476, 5444, 844, 1268),
    ("Coffee", 286, 2, 22, 1570, 6018, 938, 1362),
    ("Cricket X", 300, 12, 20, 1997, 6637, 1365, 1789),
    ("DistalPhalanxOutlineCorrect", 80, 2, 10, 1410, 5378, 778, 1202),
    ("DistalPhalanxTW", 80, 6, 10, 1641, 5609, 1009, 1433),
    ("ECG200", 96, 2, 12, 1410, 5378, 778, 1202),
    ("ECG5000", 140, 5, 14, 1606, 5766, 974, 1398),
    ("ECGFiveDays", 136, 2, 17, 1443, 5411, 811, 1235),
    ("FaceAll", 131, 14, 131, 1615, 4911, 983, 1407),
    ("FaceFour", 350, 4, 25, 1701, 6245, 1069, 1493),
    ("FacesUCR", 131, 14, 131, 1615, 4911, 983, 1407),
    ("Gun Point", 150, 2, 15, 1507, 5667, 875, 1299),
    ("InsectWingbeatSound", 256, 11, 16, 1996, 6732, 1364, 1788),
    ("ItalyPowerDemand", 24, 2, 6, 1315, 4899, 683, 1107),
    ("Lighting2", 637, 2, 49, 1570, 6018, 938, 1362),
    ("MiddlePhalanxOutlineCorrect", 80, 2, 10, 1410, 5378, 778, 1202),
)


N_H = 32


M_ORNN = 16


M_SVD = 8  # m = 16 reflections in all, m1 = m2 = 8 (Sec. 7.1)


def table3_counts(
    n_i: int, n_o: int, *, m_svd: int = M_SVD, m_ornn: int = M_ORNN, out_bias: bool = False, init_state: bool = False
) -> tuple[int, int, int, int]:
    """(RNN, LSTM, oRNN, svdRNN) counts with n_h = 32 under a counting convention: the paper's
    (Sec. 4) by default; ``out_bias`` adds Y's bias, ``init_state`` a learned h0 (and c0 for LSTM)."""
    extra = n_o * out_bias
    h0 = N_H * init_state
    return (
        svd.rnn_parameter_count(N_H, n_i, n_o) + extra + h0,
        svd.lstm_parameter_count(N_H, n_i, n_o) + extra + 2 * h0,
        svd.ornn_parameter_count(N_H, n_i, n_o, m_ornn) + extra + h0,
        svd.svdrnn_parameter_count(N_H, n_i, n_o, m_svd, m_svd) + extra + h0,
    )


def explain_row(n_i: int, classes: int, printed: tuple[int, int, int, int]) -> list[dict[str, Any]]:
    """Every convention (output bias, learned initial state, reflections per svdRNN side, output
    width n_o = classes + d, d = 0..4) that reproduces all four printed counts of a row."""
    found = []
    for out_bias in (False, True):
        for init_state in (False, True):
            for m_svd in (8, 16):
                for d in range(5):
                    got = table3_counts(n_i, classes + d, m_svd=m_svd, out_bias=out_bias, init_state=init_state)
                    if got == printed:
                        found.append(
                            {
                                "output bias": out_bias,
                                "learned h0 (c0)": init_state,
                                "m1 = m2": m_svd,
                                "n_o": classes + d,
                            }
                        )
    return found
