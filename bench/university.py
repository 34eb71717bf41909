#!/usr/bin/env python3
"""A seeded, LUBM-like university data set with an OWL ontology, as two N-Triples
files: the stored data (ontology + instances) and its materialized closure under
the OWL-RL rules Tern answers at query time (docs/inference.md).

    python3 bench/university.py --universities 100 [--seed 1] [--dir DIR] [--jobs 2]
    from university import generate; generate(stored, materialized, universities, seed)

The same (universities, seed) always gives the same two files. About 100 K stored
triples per university (--universities 100: ~10 M), and about 1.7 times as many
in the closure. Standard library only.

Ontology (ub: = http://tern.bench/univ#), emitted once, at the top of both files:
- classes: Person ⊒ Employee ⊒ Faculty ⊒ Professor ⊒ {Full,Associate,Assistant}Professor,
  Faculty ⊒ Lecturer, Person ⊒ Student ⊒ {Undergraduate,Graduate}Student,
  Person ⊒ TeachingAssistant; Organization ⊒ {University, Department, ResearchGroup};
  Work ⊒ Publication ⊒ Article ⊒ {JournalArticle, ConferencePaper},
  Publication ⊒ TechnicalReport, Work ⊒ Course ⊒ GraduateCourse; ResearchTopic;
- Chair ≡ Person ⊓ ∃headOf.Department (owl:equivalentClass of an owl:intersectionOf
  with an owl:someValuesFrom restriction, as blank nodes);
- TenuredProfessor ≡ ∃tenureStatus.{Tenured} (owl:hasValue), TenuredProfessor ⊑ Professor;
- headOf ⊑ worksFor ⊑ memberOf (domain Person, range Organization);
  {undergraduate,masters,doctoral}DegreeFrom ⊑ degreeFrom (domain Person, range
  University), hasAlumnus owl:inverseOf degreeFrom; subOrganizationOf is an
  owl:TransitiveProperty (Organization to Organization); knows an
  owl:SymmetricProperty (Person); teacherOf (Faculty → Course), takesCourse
  (Student → Course), advisor (Person → Professor), teachingAssistantOf
  (TeachingAssistant → Course), publicationAuthor (Publication → Person),
  researchInterest (→ ResearchTopic: topics are typed only through this range).

Instances per university (http://www.UniversityU.edu): 13-17 departments
(http://www.DepartmentD.UniversityU.edu, subOrganizationOf the university), each with
10-20 research groups (subOrganizationOf the department), 7-10 full, 10-14 associate,
8-11 assistant professors and 5-7 lecturers (FullProfessor0 is headOf the department,
the others worksFor it), 8-14 undergraduates and 3-4 graduate students per faculty
member (memberOf the department), 1-2 courses per faculty member and a graduate
course for three in five (teacherOf), takesCourse (2-4 courses, 1-3 graduate courses), advisors (every
graduate student, a fifth of the undergraduates), teaching assistants (a fifth of the
graduate students, typed only through teachingAssistantOf's domain), publications
(journal articles, conference papers, technical reports) with 1-2 authors, degrees
from random universities of the data set, knows (within the university), names,
emails, telephones, research interests and tenure (stored either as tenureStatus or
as rdf:type TenuredProfessor). A quarter of the faculty (every department head among
them) and a fifth of the graduate students also have a registry IRI
(http://registry.tern.bench/person/U.N, owl:sameAs their university IRI) that holds
their degrees (stored on the registry IRI only) and half of their authorships; a
tenth of those also have a legacy registry IRI (owl:sameAs the registry one), so that
sameAs classes need eq-trans.

The closure: every triple of the stored file plus every triple the rules of
docs/inference.md entail (rdfs2, rdfs3, rdfs5, rdfs7, rdfs9, rdfs11, the reflexive
pairs of rdfs6/rdfs10 for the classes and properties of the hierarchy, cax-eqc,
cls-int1/2, cls-svf1, cls-hv1/2, prp-inv1/2, prp-symp, prp-trp, eq-sym, eq-trans,
eq-rep-s/o for IRIs), by a forward chainer written for this (independent of Tern's
backward rewriting, so the two check each other), within the documented limits:
no rdfs:Resource typing, no axiomatic triples, no eq-rep-p, and no entailed triple
that names a blank node (Tern never answers a blank-node class or property through
the hierarchy; here that leaves out `x rdf:type _:chairDefinition` and the hierarchy
pairs of the blank nodes, which the chainer still uses to derive the named ones).
"""
import argparse
import json
import multiprocessing
import random
import sys
import time
from pathlib import Path

UB = "http://tern.bench/univ#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
TYPE = f"<{RDF}type>"
SUB_CLASS_OF, SUB_PROPERTY_OF = f"<{RDFS}subClassOf>", f"<{RDFS}subPropertyOf>"
DOMAIN, RANGE = f"<{RDFS}domain>", f"<{RDFS}range>"
SAME_AS, EQUIVALENT_CLASS, EQUIVALENT_PROPERTY = f"<{OWL}sameAs>", f"<{OWL}equivalentClass>", \
    f"<{OWL}equivalentProperty>"
INVERSE_OF, INTERSECTION_OF = f"<{OWL}inverseOf>", f"<{OWL}intersectionOf>"
ON_PROPERTY, SOME_VALUES_FROM, HAS_VALUE = f"<{OWL}onProperty>", f"<{OWL}someValuesFrom>", f"<{OWL}hasValue>"
SYMMETRIC, TRANSITIVE, THING = f"<{OWL}SymmetricProperty>", f"<{OWL}TransitiveProperty>", f"<{OWL}Thing>"
FIRST, REST, NIL = f"<{RDF}first>", f"<{RDF}rest>", f"<{RDF}nil>"
REGISTRY = "http://registry.tern.bench/"
TOPICS = 200  # research topics, shared by all universities


def ub(name: str) -> str:
    return f"<{UB}{name}>"


def lit(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def university_iri(u: int) -> str:
    return f"<http://www.University{u}.edu>"


def department_iri(u: int, d: int) -> str:
    return f"<http://www.Department{d}.University{u}.edu>"


def topic_iri(k: int) -> str:
    return f"<http://tern.bench/topic/Research{k}>"


# --- the ontology ---------------------------------------------------------

def ontology() -> list[tuple[str, str, str]]:
    t = []
    classes = {
        "Employee": "Person", "Faculty": "Employee", "Professor": "Faculty", "FullProfessor": "Professor",
        "AssociateProfessor": "Professor", "AssistantProfessor": "Professor", "Lecturer": "Faculty",
        "TenuredProfessor": "Professor", "Student": "Person", "UndergraduateStudent": "Student",
        "GraduateStudent": "Student", "TeachingAssistant": "Person", "University": "Organization",
        "Department": "Organization", "ResearchGroup": "Organization", "Publication": "Work", "Article": "Publication",
        "JournalArticle": "Article", "ConferencePaper": "Article", "TechnicalReport": "Publication",
        "Course": "Work", "GraduateCourse": "Course",
    }
    for c in ("Person", "Organization", "Work", "ResearchTopic", "Chair", *classes):
        t.append((ub(c), TYPE, f"<{OWL}Class>"))
    for sub, sup in classes.items():
        t.append((ub(sub), SUB_CLASS_OF, ub(sup)))
    # Chair ≡ Person ⊓ ∃headOf.Department
    t += [(ub("Chair"), EQUIVALENT_CLASS, "_:chairDefinition"),
          ("_:chairDefinition", TYPE, f"<{OWL}Class>"),
          ("_:chairDefinition", INTERSECTION_OF, "_:chairParts1"),
          ("_:chairParts1", FIRST, ub("Person")), ("_:chairParts1", REST, "_:chairParts2"),
          ("_:chairParts2", FIRST, "_:headOfDepartment"), ("_:chairParts2", REST, NIL),
          ("_:headOfDepartment", TYPE, f"<{OWL}Restriction>"),
          ("_:headOfDepartment", ON_PROPERTY, ub("headOf")),
          ("_:headOfDepartment", SOME_VALUES_FROM, ub("Department"))]
    # TenuredProfessor ≡ ∃tenureStatus.{Tenured}
    t += [(ub("TenuredProfessor"), EQUIVALENT_CLASS, "_:tenured"),
          ("_:tenured", TYPE, f"<{OWL}Restriction>"),
          ("_:tenured", ON_PROPERTY, ub("tenureStatus")),
          ("_:tenured", HAS_VALUE, ub("Tenured")),
          (ub("Tenured"), TYPE, ub("TenureStatus")), (ub("TenureTrack"), TYPE, ub("TenureStatus"))]
    properties = {  # name: (super-property, domain, range)
        "memberOf": (None, "Person", "Organization"), "worksFor": ("memberOf", None, None),
        "headOf": ("worksFor", None, None),
        "degreeFrom": (None, "Person", "University"), "undergraduateDegreeFrom": ("degreeFrom", None, None),
        "mastersDegreeFrom": ("degreeFrom", None, None), "doctoralDegreeFrom": ("degreeFrom", None, None),
        "hasAlumnus": (None, "University", "Person"),
        "subOrganizationOf": (None, "Organization", "Organization"), "knows": (None, "Person", "Person"),
        "teacherOf": (None, "Faculty", "Course"), "takesCourse": (None, "Student", "Course"),
        "advisor": (None, "Person", "Professor"), "teachingAssistantOf": (None, "TeachingAssistant", "Course"),
        "publicationAuthor": (None, "Publication", "Person"), "researchInterest": (None, None, "ResearchTopic"),
        "tenureStatus": (None, "Professor", "TenureStatus"),
    }
    for p, (sup, dom, rng) in properties.items():
        t.append((ub(p), TYPE, f"<{OWL}ObjectProperty>"))
        if sup:
            t.append((ub(p), SUB_PROPERTY_OF, ub(sup)))
        if dom:
            t.append((ub(p), DOMAIN, ub(dom)))
        if rng:
            t.append((ub(p), RANGE, ub(rng)))
    t += [(ub("hasAlumnus"), INVERSE_OF, ub("degreeFrom")),
          (ub("subOrganizationOf"), TYPE, TRANSITIVE),
          (ub("knows"), TYPE, SYMMETRIC)]
    for p in ("name", "emailAddress", "telephone"):
        t.append((ub(p), TYPE, f"<{OWL}DatatypeProperty>"))
    return t


# --- one university -------------------------------------------------------

def university(u: int, universities: int, seed: int) -> list[tuple[str, str, str]]:
    """The instance triples of university u (each university from its own seeded
    generator, so that universities can be generated independently)."""
    rng = random.Random(f"university-{seed}-{u}")
    t = []
    add = t.append
    univ = university_iri(u)
    add((univ, TYPE, ub("University")))
    add((univ, ub("name"), lit(f"University{u}")))
    registry_count = 0
    # Persons of the university who may know each other: faculty and graduate students.
    acquaintances = []
    knows = set()

    def registered(person: str) -> str:
        """A registry IRI for person (and sometimes a legacy one behind it)."""
        nonlocal registry_count
        registry_count += 1
        reg = f"<{REGISTRY}person/{u}.{registry_count}>"
        add((person, SAME_AS, reg))
        if rng.random() < 0.1:
            add((reg, SAME_AS, f"<{REGISTRY}legacy/{u}.{registry_count}>"))
        return reg

    def person(iri: str, kind: str, name: str, domain: str) -> None:
        add((iri, TYPE, ub(kind)))
        add((iri, ub("name"), lit(name)))
        add((iri, ub("emailAddress"), lit(f"{name}@{domain}")))
        add((iri, ub("telephone"), lit(f"{rng.randrange(100, 1000)}-{rng.randrange(1000, 10000)}")))

    def degree(holder: str, prop: str) -> None:
        add((holder, ub(prop), university_iri(rng.randrange(universities))))

    for d in range(rng.randint(13, 17)):
        dept = department_iri(u, d)
        base = dept[1:-1]
        host = f"Department{d}.University{u}.edu"
        add((dept, TYPE, ub("Department")))
        add((dept, ub("name"), lit(f"Department{d}")))
        add((dept, ub("subOrganizationOf"), univ))
        for g in range(rng.randint(10, 20)):
            group = f"<{base}/ResearchGroup{g}>"
            add((group, TYPE, ub("ResearchGroup")))
            add((group, ub("subOrganizationOf"), dept))

        faculty = []  # (iri, kind, registry IRI or None)
        for kind, low, high in (("FullProfessor", 7, 10), ("AssociateProfessor", 10, 14),
                                ("AssistantProfessor", 8, 11), ("Lecturer", 5, 7)):
            for i in range(rng.randint(low, high)):
                iri = f"<{base}/{kind}{i}>"
                head = kind == "FullProfessor" and i == 0
                person(iri, kind, f"{kind}{i}", host)
                add((iri, ub("headOf") if head else ub("worksFor"), dept))
                for k in rng.sample(range(TOPICS), rng.randint(1, 2)):
                    add((iri, ub("researchInterest"), topic_iri(k)))
                if kind != "Lecturer":
                    tenured = kind == "FullProfessor" or (kind == "AssociateProfessor" and rng.random() < 0.5)
                    if tenured and (head or rng.random() < 0.4):
                        add((iri, TYPE, ub("TenuredProfessor")))
                    else:
                        add((iri, ub("tenureStatus"), ub("Tenured" if tenured else "TenureTrack")))
                reg = registered(iri) if head or rng.random() < 0.25 else None
                holder = reg or iri  # degrees are in the registry, when the person is
                degree(holder, "undergraduateDegreeFrom")
                if kind != "Lecturer" or rng.random() < 0.5:
                    degree(holder, "mastersDegreeFrom")
                    degree(holder, "doctoralDegreeFrom")
                faculty.append((iri, kind, reg))
        professors = [f for f in faculty if f[1] != "Lecturer"]

        courses, graduate_courses = [], []
        for iri, _, _ in faculty:
            for _ in range(rng.randint(1, 2)):
                c = f"<{base}/Course{len(courses)}>"
                courses.append(c)
                add((c, TYPE, ub("Course")))
                add((c, ub("name"), lit(f"Course{len(courses) - 1}")))
                add((iri, ub("teacherOf"), c))
            if rng.random() < 0.6:
                c = f"<{base}/GraduateCourse{len(graduate_courses)}>"
                graduate_courses.append(c)
                add((c, TYPE, ub("GraduateCourse")))
                add((c, ub("name"), lit(f"GraduateCourse{len(graduate_courses) - 1}")))
                add((iri, ub("teacherOf"), c))

        def student(kind: str, i: int, offered: list[str], low: int, high: int) -> str:
            iri = f"<{base}/{kind}{i}>"
            person(iri, kind, f"{kind}{i}", host)
            add((iri, ub("memberOf"), dept))
            for c in rng.sample(offered, min(len(offered), rng.randint(low, high))):
                add((iri, ub("takesCourse"), c))
            return iri

        undergraduates = []
        for i in range(len(faculty) * rng.randint(8, 14)):
            iri = student("UndergraduateStudent", i, courses, 2, 4)
            if rng.random() < 0.2:
                add((iri, ub("advisor"), rng.choice(professors)[0]))
            undergraduates.append(iri)
        for iri in undergraduates:
            if rng.random() < 0.3:
                other = rng.choice(undergraduates)
                if other != iri and (iri, other) not in knows:
                    knows.add((iri, other))
                    add((iri, ub("knows"), other))

        graduates = []  # (iri, registry IRI or None)
        for i in range(len(faculty) * rng.randint(3, 4)):
            iri = student("GraduateStudent", i, graduate_courses, 1, 3)
            add((iri, ub("advisor"), rng.choice(professors)[0]))
            reg = registered(iri) if rng.random() < 0.2 else None
            degree(reg or iri, "undergraduateDegreeFrom")
            if rng.random() < 0.2:
                add((iri, ub("teachingAssistantOf"), rng.choice(courses)))
            graduates.append((iri, reg))

        # Publications: by a faculty member, sometimes with a graduate student; a
        # registered author is named by the registry IRI on half of them.
        def author(iri: str, reg: str | None) -> str:
            return reg if reg and rng.random() < 0.5 else iri

        for iri, kind, reg in faculty:
            low, high = {"FullProfessor": (15, 20), "AssociateProfessor": (10, 18), "AssistantProfessor": (5, 10),
                         "Lecturer": (0, 5)}[kind]
            for i in range(rng.randint(low, high)):
                pub = f"<{iri[1:-1]}/Publication{i}>"
                add((pub, TYPE, ub(rng.choice(("JournalArticle", "ConferencePaper", "ConferencePaper",
                                               "TechnicalReport")))))
                add((pub, ub("name"), lit(f"Publication{i}")))
                add((pub, ub("publicationAuthor"), author(iri, reg)))
                if rng.random() < 0.4:
                    add((pub, ub("publicationAuthor"), author(*rng.choice(graduates))))
        acquaintances += [f[0] for f in faculty] + [g[0] for g in graduates]

    # knows: faculty and graduate students, 1-2 acquaintances each, anywhere in the university.
    for iri in acquaintances:
        for _ in range(rng.randint(1, 2)):
            other = rng.choice(acquaintances)
            if other != iri and (iri, other) not in knows:
                knows.add((iri, other))
                add((iri, ub("knows"), other))
    return t


# --- the forward chainer ---------------------------------------------------

def is_literal(term: str) -> bool:
    return term.startswith('"')


def is_blank(term: str) -> bool:
    return term.startswith("_:")


class Schema:
    """The rule tables of an ontology: direct super-classes and super-properties
    (cax-sco with rdfs:subClassOf, owl:equivalentClass both ways (cax-eqc) and the
    parts of an intersection (cls-int2); prp-spo1 with rdfs:subPropertyOf and
    owl:equivalentProperty both ways), domains, ranges, inverses, symmetric and
    transitive properties, intersections, someValuesFrom and hasValue restrictions."""

    def __init__(self, triples: list[tuple[str, str, str]]):
        by_predicate: dict[str, list[tuple[str, str]]] = {}
        for s, p, o in triples:
            by_predicate.setdefault(p, []).append((s, o))
        pairs = lambda p: by_predicate.get(p, [])
        first = dict(pairs(FIRST))
        rest = dict(pairs(REST))

        def rdf_list(head: str) -> list[str]:
            out = []
            while head != NIL and head in first:
                out.append(first[head])
                head = rest.get(head, NIL)
            return out

        self.class_edges = list(pairs(SUB_CLASS_OF))
        self.class_edges += [e for a, b in pairs(EQUIVALENT_CLASS) for e in ((a, b), (b, a))]
        self.intersections = {c: rdf_list(head) for c, head in pairs(INTERSECTION_OF)}
        self.class_edges += [(c, part) for c, parts in self.intersections.items() for part in parts]
        self.property_edges = list(pairs(SUB_PROPERTY_OF))
        self.property_edges += [e for a, b in pairs(EQUIVALENT_PROPERTY) for e in ((a, b), (b, a))]
        self.super_classes = group(self.class_edges)
        self.super_properties = group(self.property_edges)
        self.domains = group(pairs(DOMAIN))
        self.ranges = group(pairs(RANGE))
        self.inverses = group([e for a, b in pairs(INVERSE_OF) for e in ((a, b), (b, a))])
        self.symmetric = {s for s, o in pairs(TYPE) if o == SYMMETRIC}
        self.transitive = {s for s, o in pairs(TYPE) if o == TRANSITIVE}
        on_property = dict(pairs(ON_PROPERTY))
        # svf: property -> [(restriction, filler)]; by_filler: filler class -> [(restriction, property)]
        self.svf = group([(on_property[r], (r, f)) for r, f in pairs(SOME_VALUES_FROM) if r in on_property])
        self.svf_by_filler = group([(f, (r, on_property[r])) for r, f in pairs(SOME_VALUES_FROM) if r in on_property])
        # hasValue: restriction -> (property, value); (property, value) -> [restriction]
        self.has_value = {r: (on_property[r], v) for r, v in pairs(HAS_VALUE) if r in on_property}
        self.has_value_by = group([((p, v), r) for r, (p, v) in self.has_value.items()])
        # cls-int1: part -> the intersections it is a part of
        self.part_of = group([(part, c) for c, parts in self.intersections.items() for part in parts])

    def hierarchy(self) -> list[tuple[str, str, str]]:
        """rdfs:subClassOf and rdfs:subPropertyOf pairs of the reflexive, transitive
        closure of each hierarchy (rdfs10/rdfs11, rdfs6/rdfs5), for the classes and
        properties that are in it: reached by forward chaining scm-sco on the edges."""
        out = []
        for predicate, edges in ((SUB_CLASS_OF, self.class_edges), (SUB_PROPERTY_OF, self.property_edges)):
            nodes = list(dict.fromkeys(n for e in edges for n in e))
            pairs = set(edges) | {(n, n) for n in nodes}
            changed = True
            while changed:  # (a ⊑ b), (b ⊑ c) → (a ⊑ c), until nothing is new
                new = {(a, c) for a, b in pairs for b2, c in pairs if b == b2} - pairs
                pairs |= new
                changed = bool(new)
            out += [(a, predicate, b) for a, b in sorted(pairs) if not is_blank(a) and not is_blank(b)]
        return out


def group(pairs) -> dict:
    out: dict = {}
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out


def materialize(schema: Schema, triples: list[tuple[str, str, str]], known: set) -> list[tuple[str, str, str]]:
    """The triples the rules entail from `triples` (with the schema's tables) that are
    neither in `triples` nor in `known`, sorted. A worklist: each new triple is joined,
    rule by rule, with the triples already derived, and each rule with two premises
    is triggered from both, so the result is the fixpoint.

    owl:sameAs classes are taken from the stored sameAs triples (as Tern does); a
    rule that derived a sameAs triple linking two classes would stop the run. Each
    triple is added together with its copies over every synonym of its subject and
    object (eq-rep-s, eq-rep-o; for the sameAs triples themselves that is eq-sym,
    eq-trans and each member the same as itself)."""
    synonyms: dict[str, list[str]] = {}
    for s, p, o in triples:
        if p == SAME_AS and s != o and not is_blank(s) and not is_blank(o):
            a, b = synonyms.get(s, [s]), synonyms.get(o, [o])
            if a is not b:
                merged = a + [x for x in b if x not in a]
                for m in merged:
                    synonyms[m] = merged
    facts = set(known)
    queue: list[tuple[str, str, str]] = []
    # Indexes for the joins: (property, object) -> subjects for someValuesFrom
    # properties; (p, s) -> objects and (p, o) -> subjects for transitive ones.
    subjects_of: dict[tuple[str, str], list[str]] = {}
    objects_of: dict[tuple[str, str], list[str]] = {}
    indexed = set(schema.svf) | schema.transitive

    def add(s: str, p: str, o: str) -> None:
        for s2 in synonyms.get(s, (s,)):
            for o2 in synonyms.get(o, (o,)):
                t = (s2, p, o2)
                if t not in facts:
                    facts.add(t)
                    queue.append(t)
                    if p in indexed:
                        subjects_of.setdefault((p, o2), []).append(s2)
                        objects_of.setdefault((p, s2), []).append(o2)
                    if p == SAME_AS and s2 != o2 and synonyms.get(s2, [s2]) is not synonyms.get(o2, [o2]):
                        raise ValueError(f"a rule derived a sameAs triple between two sameAs classes (this chainer takes them from the stored sameAs triples only): {t}")

    for s, p, o in triples:
        add(s, p, o)
    i = 0
    while i < len(queue):
        s, p, o = queue[i]
        i += 1
        if p == TYPE:
            for d in schema.super_classes.get(o, ()):  # cax-sco, cax-eqc, cls-int2
                add(s, TYPE, d)
            if o in schema.has_value:  # cls-hv1
                prop, value = schema.has_value[o]
                add(s, prop, value)
            for c in schema.part_of.get(o, ()):  # cls-int1
                if all((s, TYPE, part) in facts for part in schema.intersections[c]):
                    add(s, TYPE, c)
            for r, prop in schema.svf_by_filler.get(o, ()):  # cls-svf1, from the value's side
                for x in subjects_of.get((prop, s), ()):
                    add(x, TYPE, r)
        for q in schema.super_properties.get(p, ()):  # prp-spo1 (rdfs7), prp-eqp
            add(s, q, o)
        for d in schema.domains.get(p, ()):  # prp-dom (rdfs2)
            add(s, TYPE, d)
        if not is_literal(o):
            for r in schema.ranges.get(p, ()):  # prp-rng (rdfs3): no literal is an instance
                add(o, TYPE, r)
            for q in schema.inverses.get(p, ()):  # prp-inv1, prp-inv2
                add(o, q, s)
            if p in schema.symmetric:  # prp-symp
                add(o, p, s)
        if p in schema.transitive:  # prp-trp, from both premises
            for z in list(objects_of.get((p, o), ())):
                add(s, p, z)
            for w in list(subjects_of.get((p, s), ())):
                add(w, p, o)
        for r, filler in schema.svf.get(p, ()):  # cls-svf1, from the property's side
            if filler == THING or (o, TYPE, filler) in facts:
                add(s, TYPE, r)
        for r in schema.has_value_by.get((p, o), ()):  # cls-hv2
            add(s, TYPE, r)
    stored = set(triples)
    return sorted(t for t in queue if t not in stored and not any(map(is_blank, t)))


# --- writing both files ----------------------------------------------------

def line(t: tuple[str, str, str]) -> str:
    return f"{t[0]} {t[1]} {t[2]} .\n"


def local(term: str) -> bool:
    """A term that only its own university's triples name (its departments' entities
    and its persons' registry IRIs); universities, topics, classes and literals are
    named by several universities."""
    return term.startswith("<http://www.Department") or term.startswith(f"<{REGISTRY}")


def chunk(job: tuple[int, int, int]) -> tuple[str, str, int, float, float]:
    """One university: its stored triples and what the rules derive from them, as
    N-Triples text, the number of stored triples and the generation and
    materialization times."""
    u, universities, seed = job
    t0 = time.perf_counter()
    stored = university(u, universities, seed)
    t1 = time.perf_counter()
    derived = materialize(SCHEMA, stored, SCHEMA_CLOSURE)
    t2 = time.perf_counter()
    return "".join(map(line, stored)), "".join(map(line, derived)), len(stored), t1 - t0, t2 - t1


ONTOLOGY = ontology()
SCHEMA = Schema(ONTOLOGY)
# The ontology's own closure: its hierarchy pairs (the other rules derive nothing from it).
SCHEMA_CLOSURE = set(ONTOLOGY) | set(SCHEMA.hierarchy()) | set(materialize(SCHEMA, ONTOLOGY, set()))


def generate(stored: Path, materialized: Path, universities: int, seed: int = 1, jobs: int = 1,
             progress: bool = True) -> dict:
    """Writes both files (through .tmp names, renamed at the end) and returns their
    counts and times.

    Each university is materialized on its own, with the ontology: exact, because no
    rule joins triples of two universities. The rules with two instance premises
    (cls-int1, cls-svf1, prp-trp, eq-rep) join triples about one person (its types,
    its headOf and the department's type, its sameAs links and its other triples), or
    a research group's link to its department with the department's to its
    university: each time both premises are triples of the same university (sameAs
    links a person to registry IRIs of that university alone). The only terms
    two universities share are the universities (degreeFrom), the research topics and
    the ontology, and what is derived about them alone (`<University7> rdf:type
    ub:Organization`, `<topic> rdf:type ub:ResearchTopic`) is derived from one triple:
    such triples, whose subject and object are both shared, are written once.
    """
    t_start = time.perf_counter()
    gen_s = mat_s = 0.0
    counts = {"universities": universities, "seed": seed, "stored": 0, "materialized": 0}
    schema_derived = sorted(SCHEMA_CLOSURE - set(ONTOLOGY))
    tmp_s, tmp_m = stored.with_name(stored.name + ".tmp"), materialized.with_name(materialized.name + ".tmp")
    stored.parent.mkdir(parents=True, exist_ok=True)
    materialized.parent.mkdir(parents=True, exist_ok=True)
    shared: set[str] = set()
    with open(tmp_s, "w") as out_s, open(tmp_m, "w") as out_m:
        text = "".join(map(line, ONTOLOGY))
        out_s.write(text)
        out_m.write(text + "".join(map(line, schema_derived)))
        counts["stored"] += len(ONTOLOGY)
        counts["materialized"] += len(ONTOLOGY) + len(schema_derived)
        jobs_list = [(u, universities, seed) for u in range(universities)]
        pool = multiprocessing.Pool(jobs) if jobs > 1 else None
        try:
            results = pool.imap(chunk, jobs_list) if pool else map(chunk, jobs_list)
            for u, (s_text, d_text, n_s, g, m) in enumerate(results):
                t = time.perf_counter()
                out_s.write(s_text)
                gen_s += g + time.perf_counter() - t
                t = time.perf_counter()
                kept = []
                for part in (s_text, d_text):
                    for ln in part.splitlines(keepends=True):
                        s, _, rest = ln.partition(" ")
                        o = rest.partition(" ")[2].rsplit(" .", 1)[0]
                        if not local(s) and not local(o):
                            if ln in shared:
                                continue
                            shared.add(ln)
                        kept.append(ln)
                out_m.write("".join(kept))
                mat_s += m + time.perf_counter() - t
                counts["stored"] += n_s
                counts["materialized"] += len(kept)
                if progress and (u + 1) % max(1, universities // 20) == 0:
                    print(f"  {u + 1}/{universities} universities, {counts['stored']:,} stored and "
                          f"{counts['materialized']:,} materialized triples, {time.perf_counter() - t_start:.0f} s",
                          file=sys.stderr)
        finally:
            if pool:
                pool.close()
                pool.join()
    tmp_s.rename(stored)
    tmp_m.rename(materialized)
    counts["entailed"] = counts["materialized"] - counts["stored"]
    counts.update(generation_s=round(gen_s, 2), materialization_s=round(mat_s, 2),
                  wall_s=round(time.perf_counter() - t_start, 2), jobs=jobs)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--universities", type=int, default=100, help="number of universities (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/tern-bench-data/inference"),
                    help="where the files go: university-N.nt and university-N-materialized.nt "
                    "(default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default: %(default)s)")
    args = ap.parse_args()
    stored = args.dir / f"university-{args.universities}.nt"
    materialized = args.dir / f"university-{args.universities}-materialized.nt"
    stats = generate(stored, materialized, args.universities, args.seed, args.jobs)
    print(json.dumps(stats))
    print(f"{stored}: {stats['stored']:,} triples; {materialized}: {stats['materialized']:,} triples "
          f"({stats['entailed']:,} entailed); generation {stats['generation_s']} s, materialization "
          f"{stats['materialization_s']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
