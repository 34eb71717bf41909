//! Term accessors and constructors: `STR`, `LANG`, `DATATYPE`,
//! `IRI`/`URI`, `STRDT`, `STRLANG` (spec 17.4.2).

use super::value::{simple_literal, simple_string};
use oxiri::Iri;
use oxrdf::vocab::rdf;
use oxrdf::{Literal, NamedNode, Term};

/// `STR`: the lexical form of a literal or the string of an IRI.
pub(super) fn str(term: &Term) -> Option<Term> {
    match term {
        Term::NamedNode(node) => Some(simple_literal(node.as_str())),
        Term::Literal(literal) => Some(simple_literal(literal.value())),
        _ => None,
    }
}

/// `LANG`: the language tag of a literal, `""` when it has none.
pub(super) fn lang(term: &Term) -> Option<Term> {
    match term {
        Term::Literal(literal) => Some(simple_literal(literal.language().unwrap_or(""))),
        _ => None,
    }
}

/// `DATATYPE`: `xsd:string` for simple literals and `rdf:langString` for
/// language-tagged ones (oxrdf already reports them that way).
pub(super) fn datatype(term: &Term) -> Option<Term> {
    match term {
        Term::Literal(literal) => Some(literal.datatype().into_owned().into()),
        _ => None,
    }
}

/// `IRI`/`URI`: an IRI unchanged, or a simple string resolved against the
/// base IRI; the result must be a valid absolute IRI.
pub(super) fn iri(term: &Term, base: Option<&Iri<String>>) -> Option<Term> {
    if let Term::NamedNode(node) = term {
        return Some(node.clone().into());
    }
    let iri = simple_string(term)?;
    let resolved = match base {
        Some(base) => base.resolve(iri).ok()?,
        None => Iri::parse(iri.to_owned()).ok()?,
    };
    Some(NamedNode::new_unchecked(resolved.into_inner()).into())
}

/// `STRDT`: a simple string with a datatype IRI. `rdf:langString` needs a
/// language tag, so it is refused.
pub(super) fn str_dt(lexical: &Term, datatype: &Term) -> Option<Term> {
    let lexical = simple_string(lexical)?;
    let Term::NamedNode(datatype) = datatype else {
        return None;
    };
    if datatype.as_ref() == rdf::LANG_STRING {
        return None;
    }
    Some(Literal::new_typed_literal(lexical, datatype.clone()).into())
}

/// `STRLANG`: a simple string with a (valid, non-empty) language tag.
pub(super) fn str_lang(lexical: &Term, language: &Term) -> Option<Term> {
    let lexical = simple_string(lexical)?;
    let language = simple_string(language)?;
    Literal::new_language_tagged_literal(lexical, language)
        .ok()
        .map(Into::into)
}

#[cfg(test)]
mod tests {
    use crate::expr::test_util::{boolean, eval, eval_with, iri, lang, lit, simple};
    use oxrdf::{BlankNode, Term};

    #[test]
    fn accessors() {
        assert_eq!(eval("STR(<http://a/b>)"), simple("http://a/b"));
        assert_eq!(eval("STR(1.50)"), simple("1.50"));
        assert_eq!(eval("STR(\"chat\"@fr)"), simple("chat"));
        assert_eq!(
            eval_with("STR(?x)", Some(BlankNode::default().into())),
            None
        );
        assert_eq!(eval("LANG(\"chat\"@FR)"), simple("fr"));
        assert_eq!(eval("LANG(\"chat\")"), simple(""));
        assert_eq!(eval("LANG(<http://a>)"), None);
        assert_eq!(
            eval("DATATYPE(\"a\")"),
            iri("http://www.w3.org/2001/XMLSchema#string")
        );
        assert_eq!(
            eval("DATATYPE(\"a\"@en)"),
            iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString")
        );
        assert_eq!(
            eval("DATATYPE(\"1\"^^xsd:int)"),
            iri("http://www.w3.org/2001/XMLSchema#int")
        );
        assert_eq!(eval("DATATYPE(<http://a>)"), None);
    }

    #[test]
    fn kind_tests() {
        let bnode: Option<Term> = Some(BlankNode::default().into());
        assert_eq!(eval("isIRI(<http://a>)"), boolean(true));
        assert_eq!(eval("isURI(\"http://a\")"), boolean(false));
        assert_eq!(eval_with("isBlank(?x)", bnode.clone()), boolean(true));
        assert_eq!(eval_with("isLiteral(?x)", bnode), boolean(false));
        assert_eq!(eval("isLiteral(\"a\"@en)"), boolean(true));
        assert_eq!(eval("isNumeric(12)"), boolean(true));
        assert_eq!(eval("isNumeric(\"12\")"), boolean(false));
        assert_eq!(
            eval("isNumeric(\"12\"^^xsd:nonNegativeInteger)"),
            boolean(true)
        );
        assert_eq!(eval("isNumeric(\"1200\"^^xsd:byte)"), boolean(false));
        assert_eq!(eval("isNumeric(\"1e0\"^^xsd:double)"), boolean(true));
        assert_eq!(eval("isNumeric(?unbound)"), None);
    }

    #[test]
    fn iri_construction() {
        assert_eq!(eval("IRI(<http://a>)"), iri("http://a"));
        assert_eq!(eval("IRI(\"http://b/c\")"), iri("http://b/c"));
        // The test context's base is http://example.com/base/.
        assert_eq!(eval("URI(\"x/y\")"), iri("http://example.com/base/x/y"));
        assert_eq!(eval("IRI(\"../z\")"), iri("http://example.com/z"));
        assert_eq!(eval("IRI(\"a b\")"), None);
        assert_eq!(eval("IRI(\"x\"@en)"), None);
        assert_eq!(eval("IRI(1)"), None);
    }

    #[test]
    fn strdt_and_strlang() {
        assert_eq!(eval("STRDT(\"123\", xsd:integer)"), lit("123", "integer"));
        assert_eq!(eval("STRDT(\"x\"@en, xsd:string)"), None);
        assert_eq!(eval("STRDT(\"x\", \"http://t\")"), None);
        assert_eq!(eval("STRDT(\"x\", rdf:langString)"), None);
        assert_eq!(eval("STRLANG(\"chat\", \"FR\")"), lang("chat", "fr"));
        assert_eq!(eval("STRLANG(\"chat\"@en, \"fr\")"), None);
        assert_eq!(eval("STRLANG(\"chat\", \"\")"), None);
        assert_eq!(eval("STRLANG(\"chat\", \"not a tag\")"), None);
    }
}
