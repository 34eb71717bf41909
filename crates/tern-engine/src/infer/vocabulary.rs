//! The RDF, RDFS and OWL terms the schema is read from.

use oxrdf::NamedNodeRef;

pub use oxrdf::vocab::rdf::{FIRST, REST, TYPE};
pub use oxrdf::vocab::rdfs::{DOMAIN, RANGE, SUB_CLASS_OF, SUB_PROPERTY_OF};

const fn owl(iri: &'static str) -> NamedNodeRef<'static> {
    NamedNodeRef::new_unchecked(iri)
}

pub const EQUIVALENT_CLASS: NamedNodeRef<'static> =
    owl("http://www.w3.org/2002/07/owl#equivalentClass");
pub const EQUIVALENT_PROPERTY: NamedNodeRef<'static> =
    owl("http://www.w3.org/2002/07/owl#equivalentProperty");
pub const INVERSE_OF: NamedNodeRef<'static> = owl("http://www.w3.org/2002/07/owl#inverseOf");
pub const SYMMETRIC_PROPERTY: NamedNodeRef<'static> =
    owl("http://www.w3.org/2002/07/owl#SymmetricProperty");
pub const TRANSITIVE_PROPERTY: NamedNodeRef<'static> =
    owl("http://www.w3.org/2002/07/owl#TransitiveProperty");
pub const INTERSECTION_OF: NamedNodeRef<'static> =
    owl("http://www.w3.org/2002/07/owl#intersectionOf");
pub const ON_PROPERTY: NamedNodeRef<'static> = owl("http://www.w3.org/2002/07/owl#onProperty");
pub const SOME_VALUES_FROM: NamedNodeRef<'static> =
    owl("http://www.w3.org/2002/07/owl#someValuesFrom");
pub const HAS_VALUE: NamedNodeRef<'static> = owl("http://www.w3.org/2002/07/owl#hasValue");
pub const SAME_AS: NamedNodeRef<'static> = owl("http://www.w3.org/2002/07/owl#sameAs");
pub const THING: NamedNodeRef<'static> = owl("http://www.w3.org/2002/07/owl#Thing");
