package io.lakeprune.spark;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import scala.Option;

/**
 * A user's mistake (an unknown table, a bad snapshot, a statement lakeprune does not support) as
 * Spark reports its own: an {@link AnalysisException} (PySpark's {@code AnalysisException}) whose
 * message is lakeprune's one line, starting with "lakeprune:". Spark's Scala code throws it
 * unchecked, from methods that declare nothing; so does this: {@code throw UserErrors.analysis(...)}.
 */
final class UserErrors {
    private UserErrors() {}

    static RuntimeException analysis(String line) {
        throw UserErrors.<RuntimeException>unchecked(new AnalysisException(
                line, Option.empty(), Option.empty(), Option.empty(), Option.empty(),
                scala.collection.immutable.Map$.MODULE$.empty(), new QueryContext[0]));
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T unchecked(Throwable exception) throws T {
        throw (T) exception;
    }
}
