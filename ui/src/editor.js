// The query editor: CodeMirror 6 with SPARQL highlighting (the official
// legacy-mode port), Ctrl/Cmd-Enter to run, server syntax errors shown as
// lint diagnostics, IRI completion, and automatic PREFIX declarations.

import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Prec } from "@codemirror/state";
import { StreamLanguage } from "@codemirror/language";
import { sparql } from "@codemirror/legacy-modes/mode/sparql";
import { lintGutter, setDiagnostics, diagnosticCount } from "@codemirror/lint";
import { tokenize, declaredPrefixes, usedPrefixes, prologueEnd } from "./sparql.js";
import { completionSource } from "./completion.js";

const sparqlLanguage = StreamLanguage.define(sparql);

/**
 * Adds a PREFIX declaration when the user types (or completes, or pastes) a
 * prefixed name whose prefix the query lacks but the server knows. It runs
 * as a transaction filter so the insertion is part of the same undo step and
 * the cursor is mapped past the added line.
 */
function autoPrefix(getPrefixes) {
  return EditorState.transactionFilter.of((tr) => {
    if (!tr.docChanged || !tr.isUserEvent("input")) return tr;
    // Only a change that adds a colon can add a prefixed name.
    let colon = false;
    tr.changes.iterChanges((_a, _b, _c, _d, inserted) => { colon ||= inserted.toString().includes(":"); });
    if (!colon) return tr;
    const text = tr.newDoc.toString();
    const tokens = tokenize(text);
    const declared = declaredPrefixes(text, tokens);
    const known = getPrefixes();
    const missing = [...usedPrefixes(tokens)].filter((p) => !declared.has(p) && known.expand(p));
    if (!missing.length) return tr;
    const lines = missing.map((p) => `PREFIX ${p}: <${known.expand(p)}>`).join("\n");
    const end = prologueEnd(tokens);
    const insert = end == null ? { from: 0, insert: `${lines}\n` } : { from: end, insert: `\n${lines}` };
    return [tr, { changes: insert, sequential: true }];
  });
}

// A server-reported error is about the text that was sent; once the text
// changes it may point at the wrong place, so any edit clears it.
const clearStaleErrors = EditorState.transactionExtender.of((tr) =>
  tr.docChanged && diagnosticCount(tr.startState) ? setDiagnostics(tr.startState, []) : null);

export function createEditor(parent, { doc, onRun, onChange = () => {}, getPrefixes, completion }) {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (onRun(), true) }])),
        basicSetup,
        sparqlLanguage,
        sparqlLanguage.data.of({ autocomplete: completionSource({ getPrefixes, ...completion }) }),
        lintGutter(),
        autoPrefix(getPrefixes),
        clearStaleErrors,
        EditorView.lineWrapping,
        EditorView.updateListener.of((update) => { if (update.docChanged) onChange(); }),
      ],
    }),
  });

  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    focus: () => view.focus(),
    /** Marks the server's error position (1-based line and column, in characters). */
    showError(line, column, message) {
      const doc = view.state.doc;
      const l = doc.line(Math.min(Math.max(line, 1), doc.lines));
      // Columns count Unicode characters; CodeMirror positions count UTF-16 units.
      let offset = 0;
      for (const ch of l.text) {
        if (--column <= 0) break;
        offset += ch.length;
      }
      const from = l.from + offset;
      const to = Math.min(from + 1, l.to);
      view.dispatch(setDiagnostics(view.state, [{ from, to, severity: "error", source: "server", message }]));
      view.dispatch({ selection: { anchor: from }, scrollIntoView: true });
    },
    clearErrors: () => view.dispatch(setDiagnostics(view.state, [])),
  };
}
