#!/usr/bin/env python3
"""A seeded generator of a bibliographic graph in the style of DBLP, as N-Triples.

    python3 bench/biblio.py OUT.nt [--triples N] [--seed S]
    from biblio import generate; generate(path, triples, seed)

The same (triples, seed) always gives the same file. The output is written as it
is generated (through OUT.tmp, renamed at the end); memory is O(documents) in
compact arrays (the citations, kept to draw transitive ones), not O(triples).

Vocabulary: http://tern.bench/biblio/ (bib:) for classes and properties, plus
rdf:type, rdfs:label, rdfs:subClassOf, dc:title, dc:creator, dcterms:issued,
dcterms:modified, foaf:Person, foaf:Organization, foaf:name, foaf:homepage.
Instances: bib:person/pN, bib:pub/dN, bib:journal/jN, bib:conf/cS-YEAR (a
proceedings volume of the series bib:series/sS), bib:org/oN, bib:publisher/uN.

What is in it (figures for 1M triples, seed 1; everything scales with --triples):
- ~63K persons (foaf:name; 5% are homonyms that copy an earlier person's exact
  name and have an rdfs:label "NAME 0002"-style disambiguation; optional
  foaf:homepage, bib:affiliation, bib:orcid);
- ~52K documents over 1950-2025, ~6.5% more every year: bib:Article (bib:journal,
  bib:volume), bib:InProceedings (bib:partOf a proceedings volume), bib:Book,
  bib:Incollection (bib:partOf a book), bib:PhdThesis / bib:MastersThesis
  (bib:school, optional bib:advisor), bib:Informal (preprints, from 1993) and
  bib:WWW (home pages, no dcterms:issued); dc:title, dcterms:issued as
  xsd:integer, dc:creator with skewed authorship (40% of the author slots are
  drawn from a Zipf-like head: bib:person/p0, the hub, has ~4.7K papers, p1
  ~2.7K, p10 ~600, ...; the rest are uniform, so most persons have 1-3 papers
  and ~14% none), bib:pages, bib:keyword literals (Zipf-like), bib:abstract on 15%
  (language-tagged, longer), bib:doi, bib:ee links, bib:note (@en/@de/@fr),
  bib:bestPaper (xsd:boolean), dcterms:modified (xsd:date), bib:cites to earlier
  documents (recent, classic, transitive - cites what a cited document cites - and
  some to documents of the same year, so there are citation cycles);
- journals and proceedings (dc:title, rdfs:label @en, bib:editor persons,
  bib:publisher, bib:isbn), organizations, publishers, a small class hierarchy.
No blank nodes. Standard library only.
"""
import argparse
import math
import os
import random
import sys
import time
from array import array
from pathlib import Path

BIB = "http://tern.bench/biblio/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
DC = "http://purl.org/dc/elements/1.1/"
DCT = "http://purl.org/dc/terms/"
FOAF = "http://xmlns.com/foaf/0.1/"

FIRST_YEAR, LAST_YEAR = 1950, 2025
GROWTH = 0.065  # documents per year grow by e^GROWTH
# Triples per document and per person, measured; used to size the graph.
TRIPLES_PER_DOC = 15.6
PERSONS_PER_DOC = 1.2
TRIPLES_PER_PERSON = 2.9

FIRST = ("James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan "
         "Joseph Jessica Thomas Sarah Charles Karen Wei Li Jing Yan Hui Xin Ming Lei Jun Hao Yuki Haruto Sakura "
         "Ren Hiroshi Aiko Kenji Satoshi Ji-woo Min-jun Seo-yeon Anna Maria Hans Jürgen Klaus Petra Sabine Uwe "
         "Jörg Günter Björn Søren Åsa Lars Ingrid Pierre François Hélène Chloé Amélie Jérôme Zoë José Jesús "
         "María Lucía Sofía Joaquín Giulia Marco Alessandro Francesca Luca Paolo Łukasz Paweł Małgorzata "
         "Krzysztof Agnieszka Ivan Olga Dmitri Natalia Sergei Tatiana Ahmed Fatima Mohammed Aisha Omar Leila "
         "Priya Rahul Arjun Ananya Vikram Deepa Sanjay Kavya Raj Neha Oluwaseun Chinedu Amara Kwame Ngozi "
         "Tomás Inês João Beatriz Rui Mateus Ewa Jan Piet Sanne Daan Femke Eero Aino Mikko Noora Dimitris "
         "Eleni Nikos Sofia Yannis Mehmet Ayşe Emre Zeynep Can Elif Tran Nguyen Minh Anh Duc Linh").split()
LAST = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez "
        "Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark "
        "Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams "
        "Wang Li Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo He Lin Luo Gao Tanaka Suzuki "
        "Takahashi Watanabe Ito Yamamoto Nakamura Kobayashi Kato Kim Park Choi Jung Kang Cho Yoon Müller "
        "Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz Hoffmann Schäfer Koch Bauer Richter Klein "
        "Wolf Schröder Neumann Schwarz Zimmermann Braun Krüger Hofmann Hartmann Lange Dubois Durand Lefèvre "
        "Moreau Laurent Simon Michel Leroy Roux Fournier Girard Bonnet Rossi Russo Ferrari Esposito Bianchi "
        "Romano Colombo Ricci Marino Greco Bruno Gallo Conti Kowalski Nowak Wiśniewski Wójcik Kowalczyk "
        "Kamiński Lewandowski Zieliński Szymański Ivanov Smirnov Kuznetsov Popov Sokolov Lebedev Kozlov Novak "
        "Svoboda Dvořák Černý Procházka Kučera Jensen Nielsen Hansen Pedersen Andersen Larsen Sørensen Johansson "
        "Karlsson Nilsson Eriksson Larsson Olsson Persson Virtanen Korhonen Mäkinen Nieminen Silva Santos "
        "Oliveira Souza Pereira Costa Ferreira Almeida Carvalho Gomes Ribeiro Martins Sharma Patel Singh Kumar "
        "Gupta Reddy Iyer Nair Rao Das Banerjee Chatterjee Mukherjee Khan Ali Hussain Ahmed Hassan Ibrahim "
        "Yilmaz Kaya Demir Şahin Çelik Öztürk Papadopoulos Georgiou Nikolaidis Okafor Adeyemi Mensah Okoro "
        "Tran Pham Hoang Vu Dang Bui Do Ngo Van de Vries Jansen de Jong Bakker Visser Smit Meijer").split()
LEAD = ("Efficient Towards On A An Scalable Learning Fast Optimal Approximate Distributed Parallel Robust "
        "Adaptive Incremental Practical Formal Secure Improved Online Generalized Query Graph Deep Automated "
        "Verified Lazy Compact Dynamic Probabilistic Semantic Fair").split()
WORDS = ("query optimization graph database index join algorithm semantic web data integration stream "
         "processing distributed system consensus protocol network learning neural model inference logic "
         "reasoning ontology knowledge base storage compression cache memory hierarchy parallel computation "
         "scheduling transaction concurrency control recovery replication partitioning sampling estimation "
         "cardinality cost evaluation benchmark workload analysis verification type theory program synthesis "
         "compiler runtime garbage collection security privacy encryption authentication access policy "
         "blockchain ledger cloud edge mobile sensor wireless routing congestion energy efficiency hardware "
         "accelerator GPU FPGA vector matrix tensor sparse dense linear algebra numerical method simulation "
         "visualization interaction interface user study crowdsourcing recommendation ranking retrieval search "
         "text language translation speech vision image video detection segmentation tracking robot planning "
         "control reinforcement game equilibrium mechanism auction market social community influence "
         "diffusion epidemic biology genome protein sequence alignment chemistry physics climate spatial "
         "temporal trajectory time series forecasting anomaly outlier fault tolerance reliability testing "
         "debugging repair mining pattern frequent itemset association clustering classification regression "
         "kernel boosting ensemble bayesian causal counterfactual explanation fairness robustness adversarial "
         "attack defense federated decentralized peer overlay gossip epidemic membership failure detector "
         "quantum circuit complexity approximation hardness lower bound upper bound randomized online "
         "streaming sketch hashing bloom filter succinct structure tree trie automaton grammar parsing regular "
         "expression string matching edit distance similarity embedding representation contrastive "
         "transformer attention pretraining fine tuning prompt large scale").split()
KEYWORDS = ("databases|query processing|query optimization|indexing|graph databases|semantic web|RDF|SPARQL|"
            "linked data|knowledge graphs|ontologies|description logics|information retrieval|search engines|"
            "machine learning|deep learning|neural networks|reinforcement learning|natural language processing|"
            "computer vision|robotics|distributed systems|consensus|fault tolerance|cloud computing|"
            "operating systems|file systems|storage|compression|caching|concurrency control|transactions|"
            "programming languages|type systems|compilers|program analysis|formal verification|model checking|"
            "theorem proving|logic|complexity theory|algorithms|data structures|graph algorithms|"
            "approximation algorithms|randomized algorithms|streaming algorithms|cryptography|security|privacy|"
            "networking|wireless networks|sensor networks|peer-to-peer|software engineering|testing|debugging|"
            "human-computer interaction|visualization|data mining|clustering|classification|recommender systems|"
            "social networks|bioinformatics|computational biology|quantum computing|parallel computing|GPU|"
            "high-performance computing|embedded systems|real-time systems|computer architecture|energy|"
            "blockchain|game theory|mechanism design|e-commerce|digital libraries|bibliometrics|"
            "data integration|data cleaning|data quality|provenance|workflows|benchmarking").split("|")
NOTES = ('"Invited paper."@en', '"Best student paper award."@en', '"Erratum in a later volume."@en',
         '"Eingeladener Beitrag."@de', '"Kurzfassung."@de', '"Article invité."@fr', '"Version étendue."@fr',
         '"Extended version of a workshop paper."@en')
CLASSES = (  # (local name, super class, English label, German label)
    ("Publication", None, "Publication", "Publikation"),
    ("Article", "Publication", "Journal Article", "Zeitschriftenartikel"),
    ("InProceedings", "Publication", "Conference Paper", "Konferenzbeitrag"),
    ("Book", "Publication", "Book", "Buch"),
    ("Incollection", "Publication", "Book Chapter", "Buchkapitel"),
    ("Thesis", "Publication", "Thesis", "Abschlussarbeit"),
    ("PhdThesis", "Thesis", "PhD Thesis", "Dissertation"),
    ("MastersThesis", "Thesis", "Master's Thesis", "Masterarbeit"),
    ("Informal", "Publication", "Informal Publication", "Informelle Publikation"),
    ("WWW", None, "Web Page", "Webseite"),
    ("Venue", None, "Venue", "Publikationsort"),
    ("Journal", "Venue", "Journal", "Zeitschrift"),
    ("Proceedings", "Venue", "Proceedings", "Tagungsband"),
    ("Series", None, "Conference Series", "Konferenzreihe"),
    ("Publisher", None, "Publisher", "Verlag"),
)
# Authors per document (older documents have fewer: see author_count).
AUTHORS_K = (1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6, 8, 12)
CITES_K = (0, 0, 0, 1, 2, 2, 3, 3, 4, 5, 6, 8, 10, 14)


def lit(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def sizes(triples: int) -> dict:
    docs = max(200, int(triples / (TRIPLES_PER_DOC + PERSONS_PER_DOC * TRIPLES_PER_PERSON)))
    return {"docs": docs, "persons": max(100, int(docs * PERSONS_PER_DOC)), "orgs": max(10, docs // 60),
            "journals": max(10, docs // 800), "series": max(8, docs // 1500), "publishers": 30}


def name_of(i: int) -> str:
    """A person's name from its number alone (so a homonym can copy it without a table)."""
    h = (i * 2654435761 + 40503) & 0xFFFFFFFF
    h2 = (i * 2246822519 + 3266489917) & 0xFFFFFFFF
    first, last = FIRST[h % len(FIRST)], LAST[h2 % len(LAST)]
    m = (h >> 16) % 40
    if m < 22:  # a middle initial on most, so that exact names are mostly distinct
        return f"{first} {chr(65 + m)}. {last}"
    return f"{first} {last}"


def generate(path, triples: int = 1_000_000, seed: int = 1) -> int:
    """Writes the graph to `path` (through path.tmp); returns the number of triples."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as out:
        n = _write(out, triples, seed)
    os.replace(tmp, path)
    return n


def _write(out, triples: int, seed: int) -> int:
    rng = random.Random(seed)
    rnd, choices, randrange = rng.random, rng.choices, rng.randrange
    sz = sizes(triples)
    D, P, O, J, S, U = sz["docs"], sz["persons"], sz["orgs"], sz["journals"], sz["series"], sz["publishers"]
    buf: list[str] = []
    add = buf.append
    count = 0

    def flush():
        nonlocal count
        count += len(buf)
        out.write("".join(buf))
        buf.clear()

    T = f" {RDF_TYPE} "
    LABEL, SUBCLASS = f" <{RDFS}label> ", f" <{RDFS}subClassOf> "
    TITLE, CREATOR, ISSUED, MODIFIED = f" <{DC}title> ", f" <{DC}creator> ", f" <{DCT}issued> ", f" <{DCT}modified> "
    NAME, HOMEPAGE = f" <{FOAF}name> ", f" <{FOAF}homepage> "
    PERSON_T, ORG_T = f"<{FOAF}Person> .\n", f"<{FOAF}Organization> .\n"
    INT, DATE, BOOL = f"^^<{XSD}integer> .\n", f"^^<{XSD}date> .\n", f"^^<{XSD}boolean> .\n"
    b = lambda local: f" <{BIB}{local}> "
    JOURNAL, VOLUME, PARTOF, PAGES, KEYWORD, ABSTRACT = (b(x) for x in
                                                         ("journal", "volume", "partOf", "pages", "keyword", "abstract"))
    DOI, EE, NOTE, BEST, CITES, EDITOR = (b(x) for x in ("doi", "ee", "note", "bestPaper", "cites", "editor"))
    PUBLISHER, ISBN, SCHOOL, ADVISOR, AFFIL, ORCID = (b(x) for x in
                                                      ("publisher", "isbn", "school", "advisor", "affiliation", "orcid"))
    SERIES, ISSN, ACRONYM = b("series"), b("issn"), b("acronym")
    cls = {c[0]: f"<{BIB}{c[0]}> .\n" for c in CLASSES}
    PP, DP, JP, CP, OP, UP = (f"<{BIB}{x}" for x in ("person/p", "pub/d", "journal/j", "conf/c", "org/o", "publisher/u"))

    # Schema.
    for local, sup, en, de in CLASSES:
        s = f"<{BIB}{local}>"
        add(f"{s}{T}<{RDFS}Class> .\n")
        add(f'{s}{LABEL}"{en}"@en .\n')
        add(f'{s}{LABEL}"{de}"@de .\n')
        if sup:
            add(f"{s}{SUBCLASS}<{BIB}{sup}> .\n")

    # Zipf-like head of the author distribution: rank r = int(K1 ** u) - 1 has probability
    # ~ log((r+2)/(r+1)) / log(K1), i.e. ~1/r. Rank r is person r: p0 is the hub.
    K1 = min(P, 2000 + P // 3) + 1
    HEAD = 0.4

    def author():
        if rnd() < HEAD:
            return int(K1 ** rnd()) - 1
        return randrange(P)

    # Publishers, organizations, journals.
    for u in range(U):
        s = f"{UP}{u}>"
        add(f"{s}{T}{cls['Publisher']}")
        add(f"{s}{LABEL}{lit(LAST[(u * 7) % len(LAST)] + ' & ' + LAST[(u * 13 + 5) % len(LAST)] + ' Press')}@en .\n")
        if u % 3 == 0:
            add(f"{s}{HOMEPAGE}<https://publisher{u}.example.org/> .\n")
    for o in range(O):
        s = f"{OP}{o}>"
        add(f"{s}{T}{ORG_T}")
        kind = ("University of ", "Institute of Technology ", "Research Lab ", "Universität ", "Université de ")[o % 5]
        add(f"{s}{LABEL}{lit(kind + LAST[(o * 31 + 7) % len(LAST)] + (' ' + str(o // len(LAST)) if o >= len(LAST) else ''))} .\n")
    journal_start = []
    for j in range(J):
        s = f"{JP}{j}>"
        start = 1990 if j == 0 else FIRST_YEAR + int(70 * rnd() ** 1.5)
        journal_start.append(start)
        title = "CoRR" if j == 0 else f"Journal of {WORDS[(j * 7) % len(WORDS)].title()} {WORDS[(j * 11 + 3) % len(WORDS)].title()}"
        if j > 0 and j % 9 == 0:
            title = f"Transactions on {WORDS[(j * 5) % len(WORDS)].title()} Systems"
        add(f"{s}{T}{cls['Journal']}")
        add(f"{s}{TITLE}{lit(title)} .\n")
        add(f"{s}{LABEL}{lit(title)}@en .\n")
        add(f"{s}{PUBLISHER}{UP}{j % U}> .\n")
        if rnd() < 0.7:
            add(f'{s}{ISSN}"{1000 + j:04d}-{(j * 37) % 10000:04d}" .\n')
    # Conference series and their proceedings volumes (one per year from the series' start).
    series_start = [1960 + int(55 * rnd() ** 0.7) for _ in range(S)]
    for c in range(S):
        s = f"<{BIB}series/s{c}>"
        acr = "".join(w[0].upper() for w in (WORDS[(c * 3) % len(WORDS)], WORDS[(c * 7 + 1) % len(WORDS)],
                                              WORDS[(c * 11 + 2) % len(WORDS)])) + ("" if c < 26 else str(c))
        add(f"{s}{T}{cls['Series']}")
        add(f"{s}{ACRONYM}{lit(acr)} .\n")
        add(f"{s}{LABEL}{lit('International Conference on ' + WORDS[(c * 3) % len(WORDS)].title() + ' ' + WORDS[(c * 7 + 1) % len(WORDS)].title())}@en .\n")
        for y in range(series_start[c], LAST_YEAR + 1):
            v = f"{CP}{c}-{y}>"
            add(f"{v}{T}{cls['Proceedings']}")
            add(f"{v}{TITLE}{lit(f'Proceedings of {acr} {y}')} .\n")
            add(f"{v}{ISSUED}\"{y}\"{INT}")
            add(f"{v}{SERIES}{s} .\n")
            add(f"{v}{PUBLISHER}{UP}{(c + y) % U}> .\n")
            for _ in range(1 + (rnd() < 0.5) + (rnd() < 0.3)):
                add(f"{v}{EDITOR}{PP}{int(K1 ** rnd()) - 1}> .\n")
            if rnd() < 0.6:
                add(f'{v}{ISBN}"978-{c % 10}-{y}-{randrange(10000):04d}" .\n')
    flush()

    # Persons: name, and optional homepage, affiliation, ORCID; 5% copy an earlier name.
    for p in range(P):
        s = f"{PP}{p}>"
        add(f"{s}{T}{PERSON_T}")
        r = rnd()
        if p > 10 and r < 0.05:
            src = randrange(p)
            add(f"{s}{NAME}{lit(name_of(src))} .\n")
            add(f"{s}{LABEL}{lit(name_of(src) + f' {(p % 9) + 2:04d}')} .\n")
        else:
            add(f"{s}{NAME}{lit(name_of(p))} .\n")
        if r < 0.25 or p < 20:
            add(f"{s}{HOMEPAGE}<https://people.example.org/~p{p}/> .\n")
        if rnd() < 0.35 or p < 20:
            add(f"{s}{AFFIL}{OP}{(p * 7919 + randrange(3)) % O}> .\n")
        if rnd() < 0.15:
            add(f'{s}{ORCID}"0000-000{p % 10}-{p % 10000:04d}-{(p * 31) % 10000:04d}" .\n')
        if len(buf) > 20000:
            flush()
    flush()

    # Documents, by year; counts grow exponentially.
    weights = [math.exp(GROWTH * (y - FIRST_YEAR)) for y in range(FIRST_YEAR, LAST_YEAR + 1)]
    total = sum(weights)
    per_year = [int(D * w / total) for w in weights]
    per_year[-1] += D - sum(per_year)
    cite_off = array("I", [0])  # cites of document d: cite_to[cite_off[d]:cite_off[d + 1]]
    cite_to = array("I")
    books = array("I")
    d = 0
    lead_n, words_n = len(LEAD), len(WORDS)
    for yi, n_year in enumerate(per_year):
        year = FIRST_YEAR + yi
        year_first, year_end = d, d + n_year
        active = [c for c in range(S) if series_start[c] <= year]
        journals = [j for j in range(1, J) if journal_start[j] <= year]
        issued = f'{ISSUED}"{year}"{INT}'
        era = (year - FIRST_YEAR) / (LAST_YEAR - FIRST_YEAR)  # 0..1
        for d in range(year_first, year_end):
            s = f"{DP}{d}>"
            r = rnd()
            # The class, by the share it has in DBLP (roughly), given what exists this year.
            if r < 0.04:
                kind = "WWW"
            elif r < 0.07 and books:
                kind = "Incollection"
            elif r < 0.10:
                kind = "Book"
            elif r < 0.13:
                kind = "PhdThesis" if r < 0.115 else "MastersThesis"
            elif r < 0.19 and year >= 1993:
                kind = "Informal"
            elif r < 0.60 and active:
                kind = "InProceedings"
            else:
                kind = "Article" if journals else "Book"
            add(f"{s}{T}{cls[kind]}")
            # Title.
            t = LEAD[randrange(lead_n)] + " " + " ".join(choices(WORDS, k=3 + randrange(8)))
            if kind == "WWW":
                t = "Home Page"
            elif rnd() < 0.01:
                t += ' with "' + WORDS[randrange(words_n)] + '"'
            add(f"{s}{TITLE}{lit(t)} .\n")
            if kind != "WWW":
                add(f"{s}{issued}")
            # Authors.
            if kind in ("WWW", "PhdThesis", "MastersThesis"):
                authors = (randrange(P),) if kind != "WWW" or rnd() < 0.5 else (author(),)
            else:
                k = AUTHORS_K[randrange(len(AUTHORS_K))]
                if era < 0.4 and k > 2:
                    k = 1 + (k > 3)
                authors = {author() for _ in range(k)}
            for a in authors:
                add(f"{s}{CREATOR}{PP}{a}> .\n")
            if kind == "WWW":
                add(f"{s}{EE}<https://people.example.org/~p{authors[0]}/home.html> .\n")
                cite_off.append(len(cite_to))
                continue
            # Venue.
            if kind == "Article":
                j = journals[int(len(journals) * rnd() ** 1.3)]
                add(f"{s}{JOURNAL}{JP}{j}> .\n")
                if rnd() < 0.9:
                    add(f'{s}{VOLUME}"{year - journal_start[j] + 1}"{INT}')
            elif kind == "Informal":
                add(f"{s}{JOURNAL}{JP}0> .\n")
            elif kind == "InProceedings":
                c = active[int(len(active) * rnd() ** 1.5)]
                add(f"{s}{PARTOF}{CP}{c}-{year}> .\n")
            elif kind == "Incollection":
                add(f"{s}{PARTOF}{DP}{books[randrange(len(books))]}> .\n")
            elif kind == "Book":
                books.append(d)
                add(f"{s}{PUBLISHER}{UP}{randrange(U)}> .\n")
                add(f'{s}{ISBN}"978-3-{d % 100000:05d}-{year % 100:02d}" .\n')
                if rnd() < 0.4:
                    for _ in range(1 + (rnd() < 0.5)):
                        add(f"{s}{EDITOR}{PP}{author()}> .\n")
            else:  # theses
                add(f"{s}{SCHOOL}{OP}{randrange(O)}> .\n")
                if rnd() < 0.6:
                    add(f"{s}{ADVISOR}{PP}{int(K1 ** rnd()) - 1}> .\n")
            if kind in ("Article", "InProceedings", "Incollection") and rnd() < 0.7:
                first = 1 + randrange(400)
                add(f'{s}{PAGES}"{first}-{first + 4 + randrange(25)}" .\n')
            # Keywords, abstract, identifiers, the rarer properties.
            for _ in range(randrange(5)):
                add(f'{s}{KEYWORD}"{KEYWORDS[int(len(KEYWORDS) * rnd() ** 2)]}" .\n')
            if rnd() < 0.15:
                a = " ".join(choices(WORDS, k=30 + randrange(50)))
                if rnd() < 0.02:
                    a += "\nKeywords follow."
                add(f"{s}{ABSTRACT}{lit('We study ' + a + '.')}{'@en' if rnd() < 0.9 else '@de'} .\n")
            if year >= 1975 and rnd() < 0.55:
                add(f'{s}{DOI}"10.{1000 + d % 97}/{d:x}" .\n')
                if rnd() < 0.8:
                    add(f"{s}{EE}<https://doi.org/10.{1000 + d % 97}/{d:x}> .\n")
            elif rnd() < 0.2:
                add(f"{s}{EE}<http://papers.example.org/d{d}.pdf> .\n")
            if rnd() < 0.03:
                add(f"{s}{NOTE}{NOTES[randrange(len(NOTES))]} .\n")
            if rnd() < 0.01:
                add(f'{s}{BEST}"true"{BOOL}')
            if rnd() < 0.08:
                add(f'{s}{MODIFIED}"{2000 + randrange(26)}-{1 + randrange(12):02d}-{1 + randrange(28):02d}"{DATE}')
            # Citations: recent work, classics, transitive (what a cited document cites), same year.
            k = CITES_K[randrange(len(CITES_K))]
            if era < 0.3:
                k //= 3
            if k and d:
                chosen, order = set(), []
                for _ in range(k):
                    r = rnd()
                    if r < 0.45:
                        t = d - 1 - int(min(d, 1 + d // 8) * rnd())
                    elif r < 0.7:
                        t = int(d * rnd() ** 2)
                    elif r < 0.96 and order:
                        via = order[randrange(len(order))]
                        if via < d and cite_off[via + 1] > cite_off[via]:
                            lo, hi = cite_off[via], cite_off[via + 1]
                            t = cite_to[lo + randrange(hi - lo)]
                        else:
                            t = int(d * rnd())
                    else:
                        t = year_first + randrange(n_year)
                    if t != d and t not in chosen:
                        chosen.add(t)
                        order.append(t)
                for t in order:
                    add(f"{s}{CITES}{DP}{t}> .\n")
                cite_to.extend(order)
            cite_off.append(len(cite_to))
            if len(buf) > 20000:
                flush()
        d = year_end
    flush()
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="N-Triples file to write")
    ap.add_argument("--triples", type=int, default=1_000_000, help="about this many triples (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    args = ap.parse_args()
    t = time.perf_counter()
    n = generate(args.out, args.triples, args.seed)
    s = time.perf_counter() - t
    print(f"{args.out}: {n:,} triples in {s:.1f} s ({n / s:,.0f} triples/s), {sizes(args.triples)}", file=sys.stderr)


if __name__ == "__main__":
    main()
