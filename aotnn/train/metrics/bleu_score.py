"""BleuScore."""
from __future__ import annotations

from collections import Counter

import numpy as np

from .metric import Metric, check_input_count, check_type, rearrange_inputs

__all__ = ['BleuScore']


def _ngrams(tokens, max_n: int) -> Counter:
    """Counts of every n-gram of ``tokens`` for n = 1..max_n (tuples as keys)."""
    counts: Counter = Counter()
    for n in range(1, max_n + 1):
        for start in range(len(tokens) - n + 1):
            counts[tuple(tokens[start:start + n])] += 1
    return counts


class BleuScore(Metric):
    r"""BLEU score of translated sentences against one or more references each.

    .. math::
        BLEU = BP \cdot \exp\left(\sum_{n=1}^{N} \frac{1}{N} \log p_n\right), \quad
        BP = \begin{cases} 1, & c > r \\ e^{1 - r/c}, & c \le r \end{cases}

    with :math:`p_n` the clipped n-gram precision over the corpus, :math:`c` the candidates' total
    length and :math:`r` the total length of the references closest in length to each candidate.

    Args:
        n_gram (int): the largest n-gram order, 1 to 4. Default: 4.
        smooth (bool): add one to every count (Lin & Och smoothing). Default: False.

    Raises:
        TypeError: ``n_gram`` not an int or ``smooth`` not a bool.
        ValueError: ``n_gram`` outside 1..4.

    Examples:
        >>> candidate_corpus = [['i', 'have', 'a', 'pen', 'on', 'my', 'desk']]
        >>> reference_corpus = [[['i', 'have', 'a', 'pen', 'in', 'my', 'desk'],
        ...                      ['there', 'is', 'a', 'pen', 'on', 'the', 'desk']]]
        >>> metric = nn.BleuScore()
        >>> metric.update(candidate_corpus, reference_corpus)
        >>> metric.eval()
        0.5946035575013605
    """

    def __init__(self, n_gram: int = 4, smooth: bool = False):
        super().__init__()
        self.n_gram = check_type(n_gram, 'n_gram', (int,), 'BleuScore')
        if not 1 <= n_gram <= 4:
            raise ValueError(f"For 'BleuScore', the argument 'n_gram' should range from 1 to 4, but got {n_gram}.")
        self.smooth = check_type(smooth, 'smooth', (bool,), 'BleuScore')
        self.clear()

    def clear(self) -> None:
        """Reset the counts."""
        self._numerator = np.zeros(self.n_gram)
        self._denominator = np.zeros(self.n_gram)
        self._c = 0.0
        self._r = 0.0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add sentences: ``update(candidate_corpus, reference_corpus)``; each candidate is a token list
        and has a list of reference token lists.

        Raises:
            ValueError: not 2 inputs, or corpora of different lengths.
        """
        check_input_count(inputs, 2, 'BleuScore', 'candidate_corpus, reference_corpus')
        candidates, references = inputs
        if len(candidates) != len(references):
            raise ValueError(f"For 'BleuScore.update', 'candidate_corpus' (inputs[0]) and 'reference_corpus' "
                             f"(inputs[1]) should be equal in length, but got {len(candidates)}, {len(references)}.")
        for candidate, refs in zip(candidates, references):
            self._c += len(candidate)
            lengths = [len(ref) for ref in refs]
            gaps = [abs(len(candidate) - length) for length in lengths]
            self._r += lengths[gaps.index(min(gaps))]
            counts = _ngrams(candidate, self.n_gram)
            allowed: Counter = Counter()
            for ref in refs:
                allowed |= _ngrams(ref, self.n_gram)
            for gram, count in (counts & allowed).items():
                self._numerator[len(gram) - 1] += count
            for gram, count in counts.items():
                self._denominator[len(gram) - 1] += count
        self._is_update = True

    def eval(self) -> float:
        """The corpus BLEU score (0.0 when some order has no match).

        Raises:
            RuntimeError: ``update`` was never called.
        """
        self._check_updated()
        if min(self._numerator) == 0.0:
            return 0.0
        if self.smooth:
            precision = (self._numerator + 1.0) / (self._denominator + 1.0)
        else:
            precision = self._numerator / self._denominator
        geometric_mean = float(np.exp(np.mean(np.log(precision))))
        penalty = 1.0 if self._c > self._r else float(np.exp(1 - self._r / self._c))
        return penalty * geometric_mean
