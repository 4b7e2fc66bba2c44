// Development-time oracle for capeval's PCFG stage (capeval_core/spice/pcfg): runs CoreNLP
// 3.6.0's englishPCFG parser exactly as SPICE-1.0's pipeline sets it up (ParserAnnotator: the
// default model with its CoreNLP flags) and writes what capeval's reimplementation must equal.
// Never needed at run time (see tools/spice_oracle/README.md).
//
//   PcfgOracle grammar OUT.tsv     the unary rules by parent and the closed unary rules by child,
//                                  in the parser's own order, scores as float bits
//   PcfgOracle parse IN.tsv OUT.jsonl [--lex]
//                                  per caption ("id<TAB>caption" lines) and sentence: the tokens,
//                                  the parser's binarized best parse (grammar states), its score
//                                  (float bits) and the final tree, read as the pipeline's parser
//                                  annotator reads them; --lex adds each word's tag scores in
//                                  the chart
//   PcfgOracle americanize IN.txt OUT.txt
//                                  each word (one a line) as the parser reads it: its word
//                                  function (British -> American spelling, month and day names
//                                  capitalised)
package edu.stanford.nlp.parser.lexparser;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;

import org.json.simple.JSONArray;
import org.json.simple.JSONObject;

import edu.stanford.nlp.ling.CoreAnnotations;
import edu.stanford.nlp.ling.CoreLabel;
import edu.stanford.nlp.pipeline.Annotation;
import edu.stanford.nlp.pipeline.StanfordCoreNLP;
import edu.stanford.nlp.trees.Tree;
import edu.stanford.nlp.util.CoreMap;
import edu.stanford.nlp.util.ScoredObject;

public class PcfgOracle {

    static LexicalizedParser load() {
        LexicalizedParser lp = LexicalizedParser.loadModel(LexicalizedParser.DEFAULT_PARSER_LOC);
        lp.setOptionFlags(lp.defaultCoreNLPFlags());  // as ParserAnnotator loads it
        return lp;
    }

    static void grammar(String out) throws Exception {
        LexicalizedParser lp = load();
        try (PrintWriter w = new PrintWriter(new OutputStreamWriter(
                new FileOutputStream(out), StandardCharsets.UTF_8))) {
            int n = lp.stateIndex.size();
            for (int s = 0; s < n; s++) {
                for (UnaryRule r : lp.ug.rulesByParent(s)) {
                    w.println("U\t" + r.parent + "\t" + r.child + "\t" + Float.floatToIntBits(r.score));
                }
            }
            for (int s = 0; s < n; s++) {
                for (UnaryRule r : lp.ug.closedRulesByChild(s)) {
                    w.println("C\t" + r.parent + "\t" + r.child + "\t" + Float.floatToIntBits(r.score));
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    static void parse(String in, String out, boolean lex) throws Exception {
        LexicalizedParser lp = load();
        Properties props = new Properties();
        props.setProperty("annotators", "tokenize,ssplit");
        StanfordCoreNLP pipeline = new StanfordCoreNLP(props);
        Field pparserField = LexicalizedParserQuery.class.getDeclaredField("pparser");
        pparserField.setAccessible(true);
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                new FileInputStream(in), StandardCharsets.UTF_8));
             BufferedWriter w = new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(out), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                int tab = line.indexOf('\t');
                Annotation ann = new Annotation(line.substring(tab + 1));
                pipeline.annotate(ann);
                JSONArray sentences = new JSONArray();
                for (CoreMap s : ann.get(CoreAnnotations.SentencesAnnotation.class)) {
                    List<CoreLabel> tokens = s.get(CoreAnnotations.TokensAnnotation.class);
                    LexicalizedParserQuery pq = lp.lexicalizedParserQuery();
                    JSONObject js = new JSONObject();
                    JSONArray words = new JSONArray();
                    for (CoreLabel t : tokens) {
                        words.add(t.word());
                    }
                    js.put("words", words);
                    boolean ok = pq.parse(tokens);
                    ExhaustivePCFGParser pp = (ExhaustivePCFGParser) pparserField.get(pq);
                    js.put("ok", ok);
                    // the parser annotator of the released CoreNLP 3.6.0 reads the best parse
                    // through the k-best search (k = 1), not getBestParse()
                    if (pp.hasParse()) {
                        js.put("score", Float.floatToIntBits((float) pp.getBestScore()));
                        List<ScoredObject<Tree>> binary = pp.getKBestParses(1);
                        js.put("binary", binary.isEmpty() ? null : binary.get(0).object().toString());
                    }
                    List<ScoredObject<Tree>> best = pq.getKBestPCFGParses(1);
                    js.put("tree", best == null || best.isEmpty() ? null : best.get(0).object().toString());
                    if (lex) {
                        JSONArray cells = new JSONArray();
                        for (int i = 0; i <= tokens.size(); i++) {
                            JSONArray cell = new JSONArray();
                            float[] scores = pp.iScore[i][i + 1];
                            for (int st = 0; st < pp.numStates; st++) {
                                if (pp.isTag[st] && scores[st] != Float.NEGATIVE_INFINITY) {
                                    JSONArray pair = new JSONArray();
                                    pair.add(st);
                                    pair.add(Float.floatToIntBits(scores[st]));
                                    cell.add(pair);
                                }
                            }
                            cells.add(cell);
                        }
                        js.put("lex", cells);
                    }
                    sentences.add(js);
                }
                JSONObject rec = new JSONObject();
                rec.put("id", line.substring(0, tab));
                rec.put("sentences", sentences);
                w.write(rec.toJSONString());
                w.write('\n');
            }
        }
    }

    static void americanize(String in, String out) throws Exception {
        LexicalizedParser lp = load();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                new FileInputStream(in), StandardCharsets.UTF_8));
             BufferedWriter w = new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(out), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                w.write(lp.getOp().wordFunction.apply(line));
                w.write('\n');
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 3 && args[0].equals("americanize")) {
            americanize(args[1], args[2]);
        } else if (args.length >= 2 && args[0].equals("grammar")) {
            grammar(args[1]);
        } else if (args.length >= 3 && args[0].equals("parse")) {
            parse(args[1], args[2], args.length > 3 && args[3].equals("--lex"));
        } else {
            System.err.println("usage: PcfgOracle grammar OUT.tsv | parse IN.tsv OUT.jsonl [--lex] | americanize IN OUT");
            System.exit(2);
        }
    }
}
