package io.lakeprune.spark;

import org.apache.spark.sql.SparkSessionExtensions;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * lakeprune's Spark session extensions ({@code spark.sql.extensions=io.lakeprune.spark.LakepruneExtensions},
 * set by {@code builder.session.spark_session()}): {@link LakepruneWrites} and {@link SnapshotReads}
 * in every session (a session made by {@code newSession()} too, which a running session's
 * strategies do not reach), and {@link LakepruneParser}, which reads {@code VERSION AS OF} of a
 * lakeprune catalog table.
 */
public final class LakepruneExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectPlannerStrategy(new AbstractFunction1<>() {
            @Override
            public LakepruneWrites apply(org.apache.spark.sql.SparkSession session) {
                return new LakepruneWrites();
            }
        });
        extensions.injectOptimizerRule(new AbstractFunction1<>() {
            @Override
            public SnapshotReads apply(org.apache.spark.sql.SparkSession session) {
                return new SnapshotReads();
            }
        });
        extensions.injectParser(new scala.runtime.AbstractFunction2<>() {
            @Override
            public LakepruneParser apply(org.apache.spark.sql.SparkSession session, org.apache.spark.sql.catalyst.parser.ParserInterface delegate) {
                return new LakepruneParser(session, delegate);
            }
        });
        return BoxedUnit.UNIT;
    }
}
