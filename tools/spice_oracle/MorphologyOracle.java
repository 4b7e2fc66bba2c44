// Development-time oracle: CoreNLP 3.6.0's lemma annotator (the one SPICE-1.0's pipeline runs)
// on single (word, tag) tokens. Input: "word<TAB>tag" lines; output: one lemma per line.
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

import edu.stanford.nlp.ling.CoreAnnotations;
import edu.stanford.nlp.ling.CoreLabel;
import edu.stanford.nlp.pipeline.Annotation;
import edu.stanford.nlp.pipeline.MorphaAnnotator;
import edu.stanford.nlp.util.ArrayCoreMap;
import edu.stanford.nlp.util.CoreMap;

public class MorphologyOracle {
    public static void main(String[] args) throws Exception {
        MorphaAnnotator annotator = new MorphaAnnotator(false);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                new FileInputStream(args[0]), StandardCharsets.UTF_8));
             BufferedWriter out = new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(args[1]), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                int tab = line.indexOf('\t');
                CoreLabel token = new CoreLabel();
                String word = line.substring(0, tab);
                token.setWord(word);
                token.setValue(word);
                token.setOriginalText(word);
                token.setTag(line.substring(tab + 1));
                List<CoreLabel> tokens = new ArrayList<>();
                tokens.add(token);
                CoreMap sentence = new ArrayCoreMap();
                sentence.set(CoreAnnotations.TokensAnnotation.class, tokens);
                List<CoreMap> sentences = new ArrayList<>();
                sentences.add(sentence);
                Annotation ann = new Annotation(word);
                ann.set(CoreAnnotations.SentencesAnnotation.class, sentences);
                annotator.annotate(ann);
                out.write(token.lemma());
                out.write('\n');
            }
        }
    }
}
