package io.lakeprune.spark;

/** The planner of this JVM, installed by the Python side ({@code builder.register(spark)}). */
public final class Planners {
    private static volatile Planner planner;

    private Planners() {}

    public static void install(Planner value) {
        planner = value;
    }

    public static boolean installed() {
        return planner != null;
    }

    static Planner get() {
        Planner current = planner;
        if (current == null) {
            throw new IllegalStateException(
                    "lakeprune: no planner in this Spark session; call builder.register(spark) first "
                            + "(sessions made by builder.session.spark_session() have it)");
        }
        return current;
    }
}
