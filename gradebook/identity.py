"""Who is who: match the identifiers a source gives (SID, login, email) to the roster.

The roster's ``SIS User ID`` is the student key everywhere in the gradebook. A source may give
any of SID, login or email; each is matched to the roster (email against the roster's Email
column, against the login itself, or against the login as the email's local part). The
student is resolved when every identifier that matches points at the same one student.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Resolution:
    """The outcome of matching one set of identifiers.

    Attributes:
        student: the SIS User ID, or ``None`` when unresolved.
        problem: why it is unresolved (empty when resolved).
    """

    student: str | None
    problem: str = ""


def _norm(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return str(value).strip().lower()


class RosterIndex:
    """Lookup tables over a roster frame (columns ``student, login, email``).

    Args:
        roster: the roster.
    """

    def __init__(self, roster: pd.DataFrame) -> None:
        self.by_sid: dict[str, str] = {}
        self.by_login: dict[str, str] = {}
        self.by_email: dict[str, str] = {}
        for row in roster.itertuples(index=False):
            sid = str(row.student)
            self.by_sid[_norm(sid)] = sid
            self.by_login[_norm(row.login)] = sid
            email = _norm(getattr(row, "email", ""))
            if email:
                self.by_email[email] = sid

    def resolve(self, sid: object = None, login: object = None, email: object = None) -> Resolution:
        """Match identifiers to one roster student.

        Args:
            sid: SIS User ID as the source spelled it.
            login: SIS Login ID.
            email: email address.

        Returns:
            The resolution; ``problem`` names what did not match.
        """
        found: dict[str, str] = {}
        given: list[str] = []
        s, lg, em = _norm(sid), _norm(login), _norm(email)
        if s:
            given.append(f"SID {sid}")
            if s in self.by_sid:
                found["SID"] = self.by_sid[s]
        if lg:
            given.append(f"login {login}")
            if lg in self.by_login:
                found["login"] = self.by_login[lg]
        if em:
            given.append(f"email {email}")
            hit = (
                self.by_email.get(em)
                or self.by_login.get(em)
                or self.by_login.get(em.split("@", 1)[0])
            )
            if hit:
                found["email"] = hit
        if not given:
            return Resolution(None, "no SID, login or email given")
        students = set(found.values())
        unmatched = [g for g, key in ((f"SID {sid}", "SID"), (f"login {login}", "login"),
                                      (f"email {email}", "email"))
                     if g in given and key not in found]
        if len(students) == 1 and unmatched:
            # e.g. an unknown SID next to a known email: a typo or another person — flag it
            # rather than credit the roster student silently
            return Resolution(None, f"{', '.join(unmatched)} not on the roster, but "
                                    f"{', '.join(sorted(found))} match {students.pop()}")
        if len(students) == 1:
            return Resolution(students.pop())
        if not students:
            return Resolution(None, f"not on the roster ({', '.join(given)})")
        detail = ", ".join(f"{k} -> {v}" for k, v in sorted(found.items()))
        return Resolution(None, f"identifiers match different students ({detail})")

    def lookup(self, ref: str) -> Resolution:
        """Resolve one free-form reference (SIS User ID, login or email), as a TA types it."""
        text = ref.strip()
        if "@" in text:
            return self.resolve(email=text)
        for key in (self.by_sid, self.by_login):
            if _norm(text) in key:
                return Resolution(key[_norm(text)])
        return Resolution(None, f"no student {text!r} on the roster (SIS User ID, login or email)")
