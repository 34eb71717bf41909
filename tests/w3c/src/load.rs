//! Building a test's dataset into a fresh index.

use crate::results::read_graph_file;
use std::io::Write;
use std::path::{Path, PathBuf};
use tern_index::builder::{build, Input, LoadOptions};
use tern_index::Index;

/// The files of a test's dataset.
#[derive(Debug, Default, Clone)]
pub struct Dataset {
    /// Loaded into the default graph.
    pub default: Vec<PathBuf>,
    /// (graph IRI, file) loaded into named graphs.
    pub named: Vec<(String, PathBuf)>,
}

impl Dataset {
    /// Adds a named graph unless one with that name is there already.
    pub fn add_named(&mut self, name: String, file: PathBuf) {
        if !self.named.iter().any(|(n, _)| *n == name) {
            self.named.push((name, file));
        }
    }
}

/// Builds the dataset into `dir/index` and opens it. RDF/XML files, which the
/// builder does not read, are converted to N-Triples in `dir` first.
pub fn build_index(dir: &Path, dataset: &Dataset) -> Result<Index, String> {
    let mut inputs = Vec::new();
    let files = dataset
        .default
        .iter()
        .map(|f| (None, f))
        .chain(dataset.named.iter().map(|(g, f)| (Some(g.clone()), f)));
    for (i, (graph, file)) in files.enumerate() {
        let is_rdf_xml = file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("rdf"));
        let path = if is_rdf_xml {
            let converted = dir.join(format!("converted-{i}.nt"));
            convert_to_ntriples(file, &converted)?;
            converted
        } else {
            file.clone()
        };
        inputs.push(Input::file(path, None, graph).map_err(|e| format!("load error: {e}"))?);
    }
    let target = dir.join("index");
    let options = LoadOptions {
        memory: 64 << 20,
        ..LoadOptions::default()
    };
    build(&target, &inputs, &options).map_err(|e| format!("load error: {e}"))?;
    Index::open(&target).map_err(|e| format!("load error: {e}"))
}

fn convert_to_ntriples(from: &Path, to: &Path) -> Result<(), String> {
    let triples = read_graph_file(from).map_err(|e| format!("load error: {e}"))?;
    let mut out = std::fs::File::create(to).map_err(|e| format!("load error: {e}"))?;
    for triple in triples {
        writeln!(out, "{triple} .").map_err(|e| format!("load error: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_default_and_named_graphs_and_rdf_xml() {
        let dir = tempfile::tempdir().unwrap();
        let ttl = dir.path().join("d.ttl");
        std::fs::write(
            &ttl,
            "<http://ex/s> <http://ex/p> [ <http://ex/q> \"o\" ] .\n",
        )
        .unwrap();
        let rdf = dir.path().join("g.rdf");
        std::fs::write(
            &rdf,
            r#"<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex/">
  <rdf:Description rdf:about="http://ex/a"><ex:p rdf:nodeID="x"/></rdf:Description>
</rdf:RDF>"#,
        )
        .unwrap();
        let work = tempfile::tempdir().unwrap();
        let mut dataset = Dataset {
            default: vec![ttl],
            named: Vec::new(),
        };
        dataset.add_named("http://ex/g".to_owned(), rdf.clone());
        dataset.add_named("http://ex/g".to_owned(), rdf);
        assert_eq!(dataset.named.len(), 1);
        build_index(work.path(), &dataset).unwrap();
    }

    #[test]
    fn builds_an_empty_dataset() {
        let work = tempfile::tempdir().unwrap();
        build_index(work.path(), &Dataset::default()).unwrap();
    }
}
