// Development-time oracle for capeval's SPICE emulation: runs SPICE-1.0's own CoreNLP 3.6.0
// pipeline and its SpiceParser on captions, and writes everything each stage computes as one
// JSON line per caption. Never needed at run time (see tools/spice_oracle/README.md).
//
// Input: a UTF-8 file with one "id<TAB>caption" per line (captions as SPICE receives them).
// Output: JSON lines {"id", "caption", "sentences": [...], "tuples": [...]}, one per input line,
// in input order. Each sentence has "tokens" ([word, tag, lemma] per token), "tree" (the
// parser's constituency tree), and three graphs as [governor, relation, dependent] edges over
// 1-based token indices with "roots": "basic", "ccprocessed" (before SceneGraphParser's
// enhancements) and "enhanced" (after them, as SPICE's rules see it). "tuples" are SpiceParser's
// proposed tuples, exactly as it builds them ([object], [object, attribute] or
// [subject, object, relation]).
package edu.anu.spice;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.json.simple.JSONArray;
import org.json.simple.JSONObject;

import edu.stanford.nlp.ling.CoreAnnotations;
import edu.stanford.nlp.ling.CoreLabel;
import edu.stanford.nlp.ling.IndexedWord;
import edu.stanford.nlp.pipeline.Annotation;
import edu.stanford.nlp.pipeline.StanfordCoreNLP;
import edu.stanford.nlp.semgraph.SemanticGraph;
import edu.stanford.nlp.semgraph.SemanticGraphCoreAnnotations;
import edu.stanford.nlp.semgraph.SemanticGraphEdge;
import edu.stanford.nlp.trees.Tree;
import edu.stanford.nlp.trees.TreeCoreAnnotations;
import edu.stanford.nlp.util.CoreMap;

public class SpiceOracle {

    @SuppressWarnings("unchecked")
    static JSONObject graph(SemanticGraph sg) {
        JSONArray edges = new JSONArray();
        for (SemanticGraphEdge e : sg.edgeListSorted()) {
            JSONArray edge = new JSONArray();
            edge.add(node(e.getGovernor()));
            edge.add(e.getRelation().toString());
            edge.add(node(e.getDependent()));
            edges.add(edge);
        }
        JSONArray roots = new JSONArray();
        for (IndexedWord r : sg.getRoots()) {
            roots.add(node(r));
        }
        JSONObject out = new JSONObject();
        out.put("edges", edges);
        out.put("roots", roots);
        return out;
    }

    /** A node as its 1-based index, or "index'" strings for copy nodes. */
    static Object node(IndexedWord w) {
        if (w.copyCount() == 0) {
            return w.index();
        }
        return w.index() + w.toPrimes();
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: SpiceOracle INPUT.tsv OUTPUT.jsonl [--ner]");
            System.exit(2);
        }
        boolean ner = args.length > 2 && args[2].equals("--ner");
        Properties props = new Properties();
        // SPICE-1.0's Annotator: tokenize,ssplit,parse,lemma,ner (ner feeds nothing SPICE reads;
        // --ner keeps it to check that claim)
        props.setProperty("annotators", ner ? "tokenize,ssplit,parse,lemma,ner" : "tokenize,ssplit,parse,lemma");
        props.setProperty("depparse.extradependencies", "MAXIMAL");
        props.setProperty("threads", "1");
        StanfordCoreNLP pipeline = new StanfordCoreNLP(props);
        SpiceParser spice = new SpiceParser(null, 1, true);

        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                new FileInputStream(args[0]), StandardCharsets.UTF_8));
             BufferedWriter out = new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(args[1]), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                int tab = line.indexOf('\t');
                String id = line.substring(0, tab);
                String caption = line.substring(tab + 1);
                Annotation ann = new Annotation(caption);
                pipeline.annotate(ann);
                JSONArray sentences = new JSONArray();
                List<CoreMap> sents = ann.get(CoreAnnotations.SentencesAnnotation.class);
                for (CoreMap s : sents) {
                    JSONObject js = new JSONObject();
                    JSONArray toks = new JSONArray();
                    for (CoreLabel t : s.get(CoreAnnotations.TokensAnnotation.class)) {
                        JSONArray tok = new JSONArray();
                        tok.add(t.word());
                        tok.add(t.tag());
                        tok.add(t.lemma());
                        toks.add(tok);
                    }
                    js.put("tokens", toks);
                    Tree tree = s.get(TreeCoreAnnotations.TreeAnnotation.class);
                    js.put("tree", tree == null ? null : tree.toString());
                    js.put("basic", graph(s.get(SemanticGraphCoreAnnotations.BasicDependenciesAnnotation.class)));
                    js.put("ccprocessed", graph(s.get(
                        SemanticGraphCoreAnnotations.CollapsedCCProcessedDependenciesAnnotation.class)));
                    sentences.add(js);
                }
                // SpiceParser enhances the CC-processed graphs in place, then applies its rules
                SpiceParser.ProposedTuples tuples = spice.parseAnnotation(ann);
                for (int k = 0; k < sents.size(); k++) {
                    ((JSONObject) sentences.get(k)).put("enhanced", graph(sents.get(k).get(
                        SemanticGraphCoreAnnotations.CollapsedCCProcessedDependenciesAnnotation.class)));
                }
                JSONArray jt = new JSONArray();
                for (ArrayList<String> t : tuples.tuples) {
                    JSONArray a = new JSONArray();
                    a.addAll(t);
                    jt.add(a);
                }
                JSONObject rec = new JSONObject();
                rec.put("id", id);
                rec.put("caption", caption);
                rec.put("sentences", sentences);
                rec.put("tuples", jt);
                out.write(rec.toJSONString());
                out.write('\n');
            }
        }
    }
}
