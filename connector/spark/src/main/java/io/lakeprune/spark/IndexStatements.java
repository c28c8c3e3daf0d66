package io.lakeprune.spark;

import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * lakeprune's index statements in Spark SQL, as Hudi's Spark SQL has them:
 *
 * <pre>
 * CREATE INDEX [IF NOT EXISTS] name ON [TABLE] t [USING type] (column, ... | expression) [OPTIONS (k = v, ...)]
 * DROP INDEX [IF EXISTS] name ON [TABLE] t
 * SHOW INDEXES (ON | FROM | IN) t
 * REFRESH INDEX name ON [TABLE] t
 * </pre>
 *
 * where {@code t} is a lakeprune table of the session catalog ({@code t}, {@code db.t}, {@code
 * spark_catalog.db.t}) or a table's location, {@code lakeprune.`/path/to/table`}. This class only
 * recognises such a statement and resolves its table to the table's location; the statement's text
 * goes to the planner's Python half, which parses it as the CLI's {@code lakeprune sql} does and
 * runs it ({@link IndexCommand}). CREATE and DROP INDEX on any other table are Spark's own (a
 * DataSource V2 catalog's indexes); SHOW and REFRESH INDEX, which Spark's grammar does not have,
 * fail with lakeprune's one line.
 */
final class IndexStatements {
    private static final String NAME = "(?:`(?:[^`]|``)+`|[\\w$]+)";
    private static final String TABLE = "(" + NAME + "(?:\\s*\\.\\s*" + NAME + ")*)";
    private static final String END = "\\s*;?\\s*";
    private static final int FLAGS = Pattern.CASE_INSENSITIVE | Pattern.DOTALL;
    private static final Pattern CREATE = Pattern.compile(
            "\\s*CREATE\\s+(?:FUNCTION\\s+)?INDEX\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?" + NAME + "\\s+ON\\s+(?:TABLE\\s+)?" + TABLE + "(?:[\\s(].*)?", FLAGS);
    private static final Pattern DROP = Pattern.compile(
            "\\s*DROP\\s+INDEX\\s+(?:IF\\s+EXISTS\\s+)?" + NAME + "\\s+ON\\s+(?:TABLE\\s+)?" + TABLE + END, FLAGS);
    private static final Pattern SHOW = Pattern.compile("\\s*SHOW\\s+INDEX(?:ES)?\\s+(?:ON|FROM|IN)\\s+" + TABLE + END, FLAGS);
    private static final Pattern REFRESH = Pattern.compile("\\s*REFRESH\\s+INDEX\\s+" + NAME + "\\s+ON\\s+(?:TABLE\\s+)?" + TABLE + END, FLAGS);
    private static final Pattern ANY = Pattern.compile("\\s*(?:(?:CREATE\\s+(?:FUNCTION\\s+)?|DROP\\s+|REFRESH\\s+)INDEX|SHOW\\s+INDEX(?:ES)?)\\b.*", FLAGS);
    // CREATE and DROP INDEX are in Spark's grammar too: one lakeprune does not read is Spark's to parse
    private static final Pattern SPARKS = Pattern.compile("\\s*(?:CREATE|DROP)\\b.*", FLAGS);

    private IndexStatements() {}

    /** The statement's plan when it is an index statement on a lakeprune table, else empty: Spark's own parse. */
    static Optional<LogicalPlan> plan(String sql, Supplier<SessionCatalog> catalogs, ParserInterface parser) throws ParseException {
        if (!ANY.matcher(sql).matches()) {
            return Optional.empty();
        }
        Matcher create = CREATE.matcher(sql);
        Matcher drop = DROP.matcher(sql);
        Matcher show = SHOW.matcher(sql);
        Matcher refresh = REFRESH.matcher(sql);
        Matcher matched = create.matches() ? create : drop.matches() ? drop : show.matches() ? show : refresh.matches() ? refresh : null;
        boolean sparkHasIt = SPARKS.matcher(sql).matches();
        if (matched == null) {
            if (sparkHasIt) {
                return Optional.empty();  // Spark's parser says what is wrong with it
            }
            throw UserErrors.analysis("lakeprune: expected SHOW INDEXES ON table or REFRESH INDEX name ON table, got: " + sql.strip());
        }
        List<String> name = CollectionConverters.asJava(parser.parseMultipartIdentifier(matched.group(1)));
        SessionCatalog catalog = catalogs.get();
        Optional<Resolved> table = lakepruneTable(name, catalog);
        if (table.isEmpty() && name.size() == 2 && name.get(0).equalsIgnoreCase(LakepruneSource.NAME) && !catalog.databaseExists(name.get(0))) {
            table = Optional.of(new Resolved(name.get(1), Optional.empty()));
        }
        if (table.isEmpty()) {
            if (sparkHasIt) {
                return Optional.empty();
            }
            throw UserErrors.analysis("lakeprune: " + String.join(".", name) + " is not a lakeprune table of the session catalog "
                    + "(name a table by its location as lakeprune.`/path/to/table`)");
        }
        return Optional.of(new IndexCommand(sql, table.get().location(), table.get().catalogName().orElse(""), matched == show));
    }

    /** A table of the session catalog: its location and the name its cached relation is refreshed by. */
    record Resolved(String location, Optional<String> catalogName) {}

    /** The lakeprune table {@code name} names in the session catalog (not a temporary view), if any. */
    static Optional<Resolved> lakepruneTable(List<String> name, SessionCatalog catalog) {
        if (name.isEmpty() || name.size() > 3) {
            return Optional.empty();
        }
        int parts = name.size();
        String table = name.get(parts - 1);
        if (parts == 1 && catalog.getTempView(table).isDefined()) {
            return Optional.empty();
        }
        if (parts == 3 && !name.get(0).equalsIgnoreCase("spark_catalog")) {
            return Optional.empty();
        }
        TableIdentifier identifier = new TableIdentifier(table, parts >= 2 ? Option.apply(name.get(parts - 2)) : Option.empty());
        try {
            if (!catalog.tableExists(identifier)) {
                return Optional.empty();
            }
            CatalogTable metadata = catalog.getTableMetadata(identifier);
            if (metadata.provider().isEmpty() || !metadata.provider().get().equalsIgnoreCase("lakeprune")) {
                return Optional.empty();
            }
            return Optional.of(new Resolved(metadata.location().toString(), Optional.of(metadata.identifier().quotedString())));
        }
        catch (Exception e) {
            return Optional.empty();  // not a table this parse can see: Spark's own analysis says what it is
        }
    }
}
