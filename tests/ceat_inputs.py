"""The small corpus and group lists the CEAT / ILPS tests share (tests/test_ceat_ilps.py,
tests/test_eval_golden.py): sentences naming gender and religion groups beside the attribute words
of :data:`GROUPS`. Each test adds the last line its own case needs."""

from __future__ import annotations

SENTENCES = [
    "The man said love is near.",
    "A woman spoke of love today.",
    "The man felt peace at home.",
    "The woman found peace there.",
    "That man is happy now.",
    "Every woman was happy here.",
    "The man saw a kill.",
    "The woman hated the ugly wall.",
    "A man swept the filth away.",
    "The woman cleaned the filth.",
    "One man was ugly inside.",
    "She said kill the woman.",
    "The Hindu family knew love.",
    "A Muslim family knew peace.",
    "The Hindu man was happy.",
    "A Muslim boy saw the ugly kill.",
    "The Hindu street had filth.",
    "Muslim friends in love and peace.",
]
GROUPS = {
    "attributes": {"A": ["love", "peace", "happy"], "B": ["kill", "ugly", "filth"]},
    "domains": {"gender": {"man": ["man"], "woman": ["woman"]}, "religion": ["Hindu", "Muslim", "Sikh"]},
}
