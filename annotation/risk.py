"""The ``risk`` stopping policy's model: how likely are the remaining judgments to change a decision?

**The crowd model** (:func:`fit_crowd`, EM on every judgment collected so far) is one-coin
Dawid-Skene with a share of hard items:

- every item (a question of a task) has a true label ``z`` with prior ``pi[question]`` and is
  either *easy* or, with probability ``hard``, *hard*;
- on an easy item, annotator ``w`` gives ``z`` with probability ``skill[w]`` (their accuracy)
  and each other label with ``(1 - skill[w]) / (L - 1)``;
- on a hard item, every label is equally likely whoever answers.

Dawid-Skene's worker accuracies weigh each vote by who cast it (two votes of careful annotators
say more than two of careless ones); the hard class is there because an item-blind model assumes
every item is as easy as the average one and under-states the risk exactly where stopping early
is dangerous (the ``hard`` crowd of ``benchmarks/adaptive_overlap.py``: with the hard class its
changed decisions stay under the bound, without it they do not). Accuracies are shrunk towards the
pool's mean with ``smoothing`` pseudo-votes, so an annotator seen on three items is not taken as
perfect.

**The prediction** (:meth:`CrowdModel.outcome_distribution`): the annotators still to come are
unknown (whoever opens the task next in Label Studio), so each future vote is drawn from the
pool: the true label with the pool's mean accuracy (weighted by how many judgments each annotator
gave) on an easy item, uniformly on a hard one. Summing over the posterior of ``(z, easy|hard)``
given the item's votes and over every way the remaining votes can fall gives the probability of
each final outcome under the kind's rule (:mod:`.settle`); a task's outcome combines its questions'
as the kind does. The ``risk`` policy stops a task when the most probable final decision has
probability above ``1 - epsilon`` and records that decision (see :mod:`.adaptive`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .settle import ItemRule, Outcome, extensions

MIN_SKILL, MAX_SKILL = 0.2, 0.995


@dataclass
class CrowdModel:
    """A fitted crowd (see the module docstring)."""

    skills: dict[str, float]
    pool: float
    hard: float
    priors: dict[str, dict[str, float]]
    labels: dict[str, tuple[str, ...]]
    n_items: int = 0
    n_judgments: int = 0
    iterations: int = 0
    _cache: dict = field(default_factory=dict, repr=False)

    def summary(self) -> dict[str, Any]:
        s = np.array(list(self.skills.values())) if self.skills else np.zeros(0)
        return {
            "model": "one-coin Dawid-Skene + hard items",
            "items": self.n_items,
            "judgments": self.n_judgments,
            "annotators": len(self.skills),
            "pool_accuracy": round(self.pool, 4),
            "hard_share": round(self.hard, 4),
            "accuracy_min": round(float(s.min()), 4) if len(s) else None,
            "accuracy_max": round(float(s.max()), 4) if len(s) else None,
            "iterations": self.iterations,
        }

    def posterior(self, question: str, votes: list[tuple[str, str]], labels: tuple[str, ...]) -> np.ndarray:
        """``P(z = label, easy|hard | votes)`` as an ``L x 2`` array over ``labels``; ``votes``:
        ``(worker, label)``. Annotators the model has not seen get the pool's accuracy."""
        L = len(labels)
        known = self.priors.get(question, {})
        prior = np.array([known.get(lab, 0.0) for lab in labels], dtype=float) + 1e-3
        prior = prior / prior.sum()
        easy = np.log(prior) + math.log(max(1.0 - self.hard, 1e-12))
        for w, lab in votes:
            p = self.skills.get(w, self.pool)
            wrong = math.log(max((1.0 - p) / max(L - 1, 1), 1e-12))
            easy = easy + wrong
            if lab in labels:
                easy[labels.index(lab)] += math.log(p) - wrong
        hard = np.log(prior) + math.log(max(self.hard, 1e-12)) + len(votes) * math.log(1.0 / L)
        lp = np.stack([easy, hard], axis=1)
        lp -= lp.max()
        post = np.exp(lp)
        return post / post.sum()

    def item_distribution(
        self, rule: ItemRule, question: str, votes: list[tuple[str, str]], remaining: int
    ) -> dict[Outcome, float]:
        """``P(final outcome)`` of one item with ``votes`` (``(worker, label)``, one per annotator) after
        exactly ``remaining`` more votes from the pool."""
        counts: dict[str, int] = {}
        for _, lab in votes:
            counts[lab] = counts.get(lab, 0) + 1
        labels = rule.all_labels(counts)
        post = self.posterior(question, votes, labels)
        out: dict[Outcome, float] = {}
        for li in range(len(labels)):
            for d in (0, 1):
                w = float(post[li, d])
                if w <= 0:
                    continue
                for o, p in self._given(rule, counts, labels, remaining, li, d).items():
                    out[o] = out.get(o, 0.0) + w * p
        return out

    def _given(
        self, rule: ItemRule, counts: Mapping[str, int], labels: tuple[str, ...], remaining: int, li: int, d: int
    ) -> dict[Outcome, float]:
        key = (rule, tuple(int(counts.get(lab, 0)) for lab in labels), remaining, li, d)
        got = self._cache.get(key)
        if got is not None:
            return got
        L = len(labels)
        if d == 0:
            theta = np.full(L, (1.0 - self.pool) / max(L - 1, 1))
            theta[li] = self.pool
        else:
            theta = np.full(L, 1.0 / L)
        logt = np.log(np.maximum(theta, 1e-300))
        res: dict[Outcome, float] = {}
        lf = math.lgamma(remaining + 1)
        for ext in extensions(L, remaining):
            lp = lf + sum(k * logt[i] - math.lgamma(k + 1) for i, k in enumerate(ext))
            c = dict(counts)
            for lab, k in zip(labels, ext, strict=False):
                if k:
                    c[lab] = c.get(lab, 0) + k
            o = rule.outcome(c)
            res[o] = res.get(o, 0.0) + math.exp(lp)
        self._cache[key] = res
        return res


def fit_crowd(
    votes,
    labels: Mapping[str, tuple[str, ...]],
    *,
    smoothing: float = 2.0,
    max_iter: int = 200,
    tol: float = 1e-6,
    start_skill: float = 0.75,
    start_hard: float = 0.1,
) -> CrowdModel:
    """EM for the model of the module docstring on ``votes``: a DataFrame with ``task``, ``question``,
    ``worker``, ``label`` (one answer per annotator and item); ``labels``: question -> its labels."""
    d = _EMData.of(votes, labels)
    if d.n == 0:
        return CrowdModel({}, start_skill, start_hard, {}, d.lab_sets)
    # start: each item's vote shares, easy
    post_z = np.zeros((d.NI, d.Lmax))
    np.add.at(post_z, (d.item_idx, d.v_lab), 1.0)
    post_z = post_z / post_z.sum(1, keepdims=True)
    post_easy: np.ndarray = np.full(d.NI, 1.0 - start_hard)
    joint_easy = post_z * post_easy[:, None]  # P(z, easy | votes)
    skill: np.ndarray = np.full(d.W, start_skill)
    hard = start_hard
    prior = np.zeros((len(d.q_names), d.Lmax))
    it = 0
    for it in range(1, max_iter + 1):
        new_skill, new_hard = d.m_step(it, skill, post_easy, post_z, joint_easy, prior, smoothing)
        pe, new_easy, new_post_z = d.e_step(new_skill, new_hard, prior)
        change = max(
            float(np.abs(new_skill - skill).max()), abs(new_hard - hard), float(np.abs(new_easy - post_easy).max())
        )
        skill, hard, post_easy, post_z, joint_easy = new_skill, new_hard, new_easy, new_post_z, pe
        if change < tol:
            break
    return d.model(skill, hard, prior, it)


@dataclass
class _EMData:
    """The judgments as EM reads them: each vote's item, annotator and label as codes (``item_idx``,
    ``w_idx``, ``v_lab``), each item's question and number of labels and votes; ``lab_sets``: each
    question's labels (the rule's, then any other label answered)."""

    n: int
    lab_sets: dict[str, tuple[str, ...]]
    item_idx: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    w_idx: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    v_lab: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    workers: np.ndarray = field(default_factory=lambda: np.zeros(0))
    q_names: list[str] = field(default_factory=list)
    q_of_item: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    L_item: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    n_item: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    valid: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    NI: int = 0
    W: int = 0
    Lmax: int = 0

    @classmethod
    def of(cls, votes, labels: Mapping[str, tuple[str, ...]]) -> _EMData:
        tasks = votes["task"].astype(str).to_numpy()
        qs = votes["question"].astype(str).to_numpy()
        ws = votes["worker"].astype(str).to_numpy()
        labs = votes["label"].astype(str).to_numpy()
        lab_sets = {q: tuple(labels.get(q) or ()) for q in set(qs)}
        for q, lab in zip(qs, labs, strict=False):  # labels outside the rule's (StereoSet's 'related') are answers too
            if lab not in lab_sets[q]:
                lab_sets[q] = lab_sets[q] + (lab,)
        if len(votes) == 0:
            return cls(0, lab_sets)
        item_key = np.char.add(np.char.add(tasks.astype(str), "\x1f"), qs.astype(str))
        items, item_idx = np.unique(item_key, return_inverse=True)
        workers, w_idx = np.unique(ws, return_inverse=True)
        NI = len(items)
        item_q = np.empty(NI, dtype=object)
        item_q[item_idx] = qs
        Lmax = max(len(v) for v in lab_sets.values())
        L_item = np.array([len(lab_sets[q]) for q in item_q])
        q_names = sorted(lab_sets)
        return cls(
            n=len(votes),
            lab_sets=lab_sets,
            item_idx=item_idx,
            w_idx=w_idx,
            v_lab=np.array([lab_sets[q].index(lab) for q, lab in zip(qs, labs, strict=False)]),
            workers=workers,
            q_names=q_names,
            q_of_item=np.array([q_names.index(q) for q in item_q]),
            L_item=L_item,
            n_item=np.bincount(item_idx, minlength=NI),
            valid=np.arange(Lmax)[None, :] < L_item[:, None],
            NI=NI,
            W=len(workers),
            Lmax=Lmax,
        )

    def m_step(self, it, skill, post_easy, post_z, joint_easy, prior, smoothing: float) -> tuple[np.ndarray, float]:
        """The annotators' accuracies and the hard share from the posteriors; each question's label prior is
        updated in place."""
        correct = joint_easy[self.item_idx, self.v_lab]
        total = post_easy[self.item_idx]
        W = self.W
        pool = float(
            np.clip(
                skill.mean() if it == 1 else (skill * np.bincount(self.w_idx, minlength=W)).sum() / self.n,
                MIN_SKILL,
                MAX_SKILL,
            )
        )
        num = np.bincount(self.w_idx, weights=correct, minlength=W) + smoothing * pool
        den = np.bincount(self.w_idx, weights=total, minlength=W) + smoothing
        new_skill = np.clip(num / den, MIN_SKILL, MAX_SKILL)
        new_hard = float(np.clip(1.0 - post_easy.mean(), 1e-4, 0.9))
        for qi in range(len(self.q_names)):
            m = self.q_of_item == qi
            pr = post_z[m].sum(0) + 0.5 * self.valid[m][0]
            prior[qi] = pr / pr.sum()
        return new_skill, new_hard

    def e_step(self, skill, hard: float, prior) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``P(z, easy | votes)``, ``P(easy | votes)`` and ``P(z | votes)`` of every item."""
        item_idx, L_item = self.item_idx, self.L_item
        logp_w = np.log(skill)[self.w_idx]
        logq_w = np.log(np.maximum((1.0 - skill[self.w_idx]) / np.maximum(L_item[item_idx] - 1, 1), 1e-12))
        base = np.bincount(item_idx, weights=logq_w, minlength=self.NI)
        easy = np.repeat(base[:, None], self.Lmax, axis=1)
        np.add.at(easy, (item_idx, self.v_lab), logp_w - logq_w)
        logprior = np.where(self.valid, np.log(np.maximum(prior[self.q_of_item], 1e-300)), -np.inf)
        le = logprior + math.log(1.0 - hard) + easy
        lh = logprior + math.log(hard) - self.n_item[:, None] * np.log(L_item)[:, None]
        mx = np.maximum(le.max(1), lh.max(1))[:, None]
        pe, ph = np.exp(le - mx), np.exp(lh - mx)
        tot = (pe.sum(1) + ph.sum(1))[:, None]
        pe, ph = pe / tot, ph / tot
        return pe, pe.sum(1), (pe + ph) / (pe + ph).sum(1, keepdims=True)

    def model(self, skill, hard: float, prior, iterations: int) -> CrowdModel:
        counts_w = np.bincount(self.w_idx, minlength=self.W)
        pool = float(np.clip((skill * counts_w).sum() / counts_w.sum(), MIN_SKILL, MAX_SKILL))
        priors = {
            q: {lab: float(prior[qi, li]) for li, lab in enumerate(self.lab_sets[q])}
            for qi, q in enumerate(self.q_names)
        }
        return CrowdModel(
            skills={str(w): float(s) for w, s in zip(self.workers, skill, strict=False)},
            pool=pool,
            hard=hard,
            priors=priors,
            labels=self.lab_sets,
            n_items=self.NI,
            n_judgments=self.n,
            iterations=iterations,
        )


def task_distribution(kind, dists: Mapping[str, Mapping[Outcome, float]]) -> dict[Outcome, float]:
    """The task's final-outcome distribution from its questions' (independent given the model), combined
    with ``kind.task_outcome``."""
    import itertools

    qs = list(dists)
    out: dict[Outcome, float] = {}
    for combo in itertools.product(*(list(dists[q].items()) for q in qs)):
        p = 1.0
        for _, pq in combo:
            p *= pq
        if p <= 0:
            continue
        o = kind.task_outcome({q: oc for q, (oc, _) in zip(qs, combo, strict=False)})
        out[o] = out.get(o, 0.0) + p
    return out
