//! The recursive evaluator: variables, logical operators with SPARQL's
//! error semantics, effective boolean value, and the dispatch of operators
//! and built-in calls to the topic modules.

use super::compare::{equals, partial_compare};
use super::numeric::{self, Numeric};
use super::value::{boolean_literal, integer_range, term_value, Value, XSD_NS};
use super::{cast, datetime, hash, pattern, random, string, term, EvalContext};
use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, Function};
use std::cell::OnceCell;
use std::cmp::Ordering;

/// Evaluation of expressions for one solution.
pub(super) struct Evaluator<'a, 'c> {
    binding: &'a dyn Fn(&Variable) -> Option<Term>,
    ctx: &'a EvalContext<'c>,
    /// Salt of `BNODE(str)` for this evaluation, drawn on first use (see
    /// [`super::evaluate`]).
    bnode_salt: OnceCell<u128>,
}

impl<'a, 'c> Evaluator<'a, 'c> {
    pub(super) fn new(
        binding: &'a dyn Fn(&Variable) -> Option<Term>,
        ctx: &'a EvalContext<'c>,
    ) -> Self {
        Self {
            binding,
            ctx,
            bnode_salt: OnceCell::new(),
        }
    }

    pub(super) fn eval(&self, expr: &Expression) -> Option<Term> {
        match expr {
            Expression::NamedNode(node) => Some(node.clone().into()),
            Expression::Literal(literal) => Some(literal.clone().into()),
            Expression::Variable(variable) => (self.binding)(variable),
            Expression::Or(a, b) => self.or(a, b).map(boolean_literal),
            Expression::And(a, b) => self.and(a, b).map(boolean_literal),
            Expression::Not(e) => Some(boolean_literal(!self.ebv(e)?)),
            Expression::Equal(a, b) => equals(&self.eval(a)?, &self.eval(b)?).map(boolean_literal),
            Expression::SameTerm(a, b) => Some(boolean_literal(self.eval(a)? == self.eval(b)?)),
            Expression::Greater(a, b) => self.ordering(a, b, |o| o == Ordering::Greater),
            Expression::GreaterOrEqual(a, b) => self.ordering(a, b, |o| o != Ordering::Less),
            Expression::Less(a, b) => self.ordering(a, b, |o| o == Ordering::Less),
            Expression::LessOrEqual(a, b) => self.ordering(a, b, |o| o != Ordering::Greater),
            Expression::In(a, list) => self.in_list(a, list).map(boolean_literal),
            Expression::Add(a, b) => self.arithmetic(a, b, numeric::add, datetime::add),
            Expression::Subtract(a, b) => {
                self.arithmetic(a, b, numeric::subtract, datetime::subtract)
            }
            Expression::Multiply(a, b) => self.arithmetic(a, b, numeric::multiply, |_, _| None),
            Expression::Divide(a, b) => self.arithmetic(a, b, numeric::divide, |_, _| None),
            Expression::UnaryPlus(e) => Some(Numeric::from_term(&self.eval(e)?)?.into_term()),
            Expression::UnaryMinus(e) => {
                Some(numeric::negate(Numeric::from_term(&self.eval(e)?)?)?.into_term())
            }
            Expression::Exists(pattern) => {
                Some(boolean_literal((self.ctx.exists)(pattern, self.binding)))
            }
            Expression::Bound(variable) => {
                Some(boolean_literal((self.binding)(variable).is_some()))
            }
            Expression::If(condition, then, otherwise) => {
                if self.ebv(condition)? {
                    self.eval(then)
                } else {
                    self.eval(otherwise)
                }
            }
            Expression::Coalesce(list) => list.iter().find_map(|e| self.eval(e)),
            Expression::FunctionCall(function, args) => self.call(function, args),
        }
    }

    fn ebv(&self, expr: &Expression) -> Option<bool> {
        effective_boolean_value(&self.eval(expr)?)
    }

    /// `||`: true if either side is true, even when the other is an error.
    fn or(&self, a: &Expression, b: &Expression) -> Option<bool> {
        match self.ebv(a) {
            Some(true) => Some(true),
            Some(false) => self.ebv(b),
            None => self.ebv(b).filter(|b| *b),
        }
    }

    /// `&&`: false if either side is false, even when the other is an error.
    fn and(&self, a: &Expression, b: &Expression) -> Option<bool> {
        match self.ebv(a) {
            Some(false) => Some(false),
            Some(true) => self.ebv(b),
            None => self.ebv(b).filter(|b| !*b),
        }
    }

    fn ordering(
        &self,
        a: &Expression,
        b: &Expression,
        test: impl Fn(Ordering) -> bool,
    ) -> Option<Term> {
        let order = partial_compare(&self.eval(a)?, &self.eval(b)?)?;
        Some(boolean_literal(order.is_some_and(test)))
    }

    /// `a IN (b1, ..., bn)` is `a = b1 || ... || a = bn`: true on the first
    /// match, an error if nothing matched but some comparison failed.
    fn in_list(&self, a: &Expression, list: &[Expression]) -> Option<bool> {
        let a = self.eval(a)?;
        let mut error = false;
        for b in list {
            match self.eval(b).and_then(|b| equals(&a, &b)) {
                Some(true) => return Some(true),
                Some(false) => {}
                None => error = true,
            }
        }
        if error {
            None
        } else {
            Some(false)
        }
    }

    /// Numeric arithmetic, or else the date/duration operator for the pair.
    fn arithmetic(
        &self,
        a: &Expression,
        b: &Expression,
        on_numbers: fn(Numeric, Numeric) -> Option<Numeric>,
        on_other: fn(&Term, &Term) -> Option<Term>,
    ) -> Option<Term> {
        let (a, b) = (self.eval(a)?, self.eval(b)?);
        match (Numeric::from_term(&a), Numeric::from_term(&b)) {
            (Some(a), Some(b)) => Some(on_numbers(a, b)?.into_term()),
            _ => on_other(&a, &b),
        }
    }

    /// Built-in and custom function calls. All arguments are evaluated first
    /// (no built-in function accepts an error argument); a wrong number of
    /// arguments, an unknown function or a SPARQL 1.2 / extension function
    /// of a spargebra feature we do not use falls through to `None`.
    fn call(&self, function: &Function, args: &[Expression]) -> Option<Term> {
        let args = args
            .iter()
            .map(|arg| self.eval(arg))
            .collect::<Option<Vec<_>>>()?;
        match (function, args.as_slice()) {
            // Terms.
            (Function::Str, [a]) => term::str(a),
            (Function::Lang, [a]) => term::lang(a),
            (Function::Datatype, [a]) => term::datatype(a),
            (Function::Iri, [a]) => term::iri(a, self.ctx.base_iri.as_ref()),
            (Function::StrDt, [a, b]) => term::str_dt(a, b),
            (Function::StrLang, [a, b]) => term::str_lang(a, b),
            (Function::IsIri, [a]) => Some(boolean_literal(a.is_named_node())),
            (Function::IsBlank, [a]) => Some(boolean_literal(a.is_blank_node())),
            (Function::IsLiteral, [a]) => Some(boolean_literal(a.is_literal())),
            (Function::IsNumeric, [a]) => Some(boolean_literal(Numeric::from_term(a).is_some())),
            // Fresh values.
            (Function::BNode, []) => Some(random::bnode()),
            (Function::BNode, [a]) => random::bnode_named(self.bnode_salt(), a),
            (Function::Rand, []) => Some(random::rand()),
            (Function::Uuid, []) => Some(random::uuid()),
            (Function::StrUuid, []) => Some(random::struuid()),
            // Numbers.
            (Function::Abs, [a]) => Some(numeric::abs(Numeric::from_term(a)?)?.into_term()),
            (Function::Ceil, [a]) => Some(numeric::ceil(Numeric::from_term(a)?)?.into_term()),
            (Function::Floor, [a]) => Some(numeric::floor(Numeric::from_term(a)?)?.into_term()),
            (Function::Round, [a]) => Some(numeric::round(Numeric::from_term(a)?)?.into_term()),
            // Strings.
            (Function::StrLen, [a]) => string::strlen(a),
            (Function::SubStr, [a, start]) => string::substr(a, start, None),
            (Function::SubStr, [a, start, length]) => string::substr(a, start, Some(length)),
            (Function::UCase, [a]) => string::ucase(a),
            (Function::LCase, [a]) => string::lcase(a),
            (Function::StrStarts, [a, b]) => string::str_starts(a, b),
            (Function::StrEnds, [a, b]) => string::str_ends(a, b),
            (Function::Contains, [a, b]) => string::contains(a, b),
            (Function::StrBefore, [a, b]) => string::str_before(a, b),
            (Function::StrAfter, [a, b]) => string::str_after(a, b),
            (Function::EncodeForUri, [a]) => string::encode_for_uri(a),
            (Function::Concat, args) => string::concat(args),
            (Function::LangMatches, [a, b]) => string::lang_matches(a, b),
            (Function::Regex, [a, p]) => pattern::regex(a, p, None),
            (Function::Regex, [a, p, flags]) => pattern::regex(a, p, Some(flags)),
            (Function::Replace, [a, p, r]) => pattern::replace(a, p, r, None),
            (Function::Replace, [a, p, r, flags]) => pattern::replace(a, p, r, Some(flags)),
            // Dates.
            (Function::Now, []) => {
                datetime::now(*self.ctx.now.get_or_init(oxsdatatypes::DateTime::now))
            }
            (Function::Year, [a]) => datetime::year(a),
            (Function::Month, [a]) => datetime::month(a),
            (Function::Day, [a]) => datetime::day(a),
            (Function::Hours, [a]) => datetime::hours(a),
            (Function::Minutes, [a]) => datetime::minutes(a),
            (Function::Seconds, [a]) => datetime::seconds(a),
            (Function::Timezone, [a]) => datetime::timezone(a),
            (Function::Tz, [a]) => datetime::tz(a),
            // Hashes.
            (Function::Md5, [a]) => hash::digest(hash::Algorithm::Md5, a),
            (Function::Sha1, [a]) => hash::digest(hash::Algorithm::Sha1, a),
            (Function::Sha256, [a]) => hash::digest(hash::Algorithm::Sha256, a),
            (Function::Sha384, [a]) => hash::digest(hash::Algorithm::Sha384, a),
            (Function::Sha512, [a]) => hash::digest(hash::Algorithm::Sha512, a),
            // XSD constructor functions (casts); other IRIs are unknown.
            (Function::Custom(name), [a]) => cast::cast(name.as_ref(), a),
            _ => None,
        }
    }

    fn bnode_salt(&self) -> u128 {
        *self.bnode_salt.get_or_init(rand::random)
    }
}

/// See [`super::effective_boolean_value`].
pub(super) fn effective_boolean_value(term: &Term) -> Option<bool> {
    match term_value(term)? {
        Value::Boolean(value) => Some(value),
        Value::Numeric(value) => Some(value.is_true()),
        Value::String(value) | Value::LangString(value, _) => Some(!value.is_empty()),
        // An invalid lexical form of a boolean or numeric datatype is false.
        Value::Other => {
            let Term::Literal(literal) = term else {
                return None;
            };
            let local = literal.datatype().as_str().strip_prefix(XSD_NS)?;
            let known = matches!(local, "boolean" | "decimal" | "float" | "double")
                || integer_range(local).is_some();
            known.then_some(false)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::test_util::{boolean, eval, eval_with, lit, simple, typed};
    use oxrdf::{BlankNode, Literal, NamedNode};

    #[test]
    fn effective_boolean_values() {
        let ebv = |t: Term| effective_boolean_value(&t);
        assert_eq!(ebv(typed("true", "boolean")), Some(true));
        assert_eq!(ebv(typed("0", "boolean")), Some(false));
        assert_eq!(ebv(typed("maybe", "boolean")), Some(false));
        assert_eq!(ebv(typed("0", "integer")), Some(false));
        assert_eq!(ebv(typed("0.0", "decimal")), Some(false));
        assert_eq!(ebv(typed("NaN", "double")), Some(false));
        assert_eq!(ebv(typed("-0.5", "float")), Some(true));
        assert_eq!(ebv(typed("abc", "int")), Some(false));
        assert_eq!(ebv(Literal::new_simple_literal("").into()), Some(false));
        assert_eq!(ebv(Literal::new_simple_literal("x").into()), Some(true));
        assert_eq!(ebv(typed("2020-01-01", "date")), None);
        assert_eq!(
            ebv(Literal::new_typed_literal("x", NamedNode::new_unchecked("http://t")).into()),
            None
        );
        assert_eq!(ebv(NamedNode::new_unchecked("http://a").into()), None);
        assert_eq!(ebv(BlankNode::default().into()), None);
    }

    #[test]
    fn logical_operators_with_errors() {
        // ?unbound is an error.
        assert_eq!(eval("true || ?unbound"), boolean(true));
        assert_eq!(eval("?unbound || true"), boolean(true));
        assert_eq!(eval("false || ?unbound"), None);
        assert_eq!(eval("?unbound || false"), None);
        assert_eq!(eval("false || false"), boolean(false));
        assert_eq!(eval("false && ?unbound"), boolean(false));
        assert_eq!(eval("?unbound && false"), boolean(false));
        assert_eq!(eval("true && ?unbound"), None);
        assert_eq!(eval("?unbound && true"), None);
        assert_eq!(eval("true && 1"), boolean(true));
        assert_eq!(eval("!?unbound"), None);
        assert_eq!(eval("!\"\""), boolean(true));
        assert_eq!(eval("(1/0 = 1) || (1 = 1)"), boolean(true));
        assert_eq!(eval("<http://a> || true"), boolean(true));
        assert_eq!(eval("<http://a> && true"), None);
    }

    #[test]
    fn in_and_not_in() {
        assert_eq!(eval("2 IN (1, 2, 3)"), boolean(true));
        assert_eq!(eval("2 IN ()"), boolean(false));
        assert_eq!(eval("2 NOT IN ()"), boolean(true));
        assert_eq!(eval("2 IN (1/0, 2)"), boolean(true));
        assert_eq!(eval("2 IN (1/0, 3)"), None);
        assert_eq!(eval("2 NOT IN (1/0, 2)"), boolean(false));
        assert_eq!(eval("2 NOT IN (1/0, 3)"), None);
        assert_eq!(eval("2 IN (\"x\"^^ex:t, 2)"), boolean(true));
        assert_eq!(eval("?unbound IN (1)"), None);
        assert_eq!(
            eval("<http://a> IN (<http://b>, <http://a>)"),
            boolean(true)
        );
    }

    #[test]
    fn bound_if_coalesce_exists() {
        let one = Some(typed("1", "integer"));
        assert_eq!(eval_with("BOUND(?x)", one.clone()), boolean(true));
        assert_eq!(eval("BOUND(?x)"), boolean(false));
        assert_eq!(eval("IF(1 < 2, \"yes\", \"no\")"), simple("yes"));
        assert_eq!(eval("IF(\"\", \"yes\", \"no\")"), simple("no"));
        assert_eq!(eval("IF(?unbound, \"yes\", \"no\")"), None);
        assert_eq!(eval("IF(true, \"yes\", 1/0)"), simple("yes"));
        assert_eq!(eval("COALESCE(?x, 1/0, 3)"), lit("3", "integer"));
        assert_eq!(eval_with("COALESCE(?x, 3)", one.clone()), one);
        assert_eq!(eval("COALESCE(?x)"), None);
        assert_eq!(eval("COALESCE()"), None);
        // The test context's EXISTS is "?x is bound".
        assert_eq!(eval_with("EXISTS { ?s ?p ?o }", one), boolean(true));
        assert_eq!(eval("NOT EXISTS { ?s ?p ?o }"), boolean(true));
    }

    #[test]
    fn unknown_functions_and_wrong_arity() {
        assert_eq!(eval("ex:unknown(1)"), None);
        assert_eq!(eval("xsd:integer(1, 2)"), None);
        assert_eq!(eval("ex:unknown()"), None);
    }
}
