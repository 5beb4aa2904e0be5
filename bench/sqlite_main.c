/* The SQLite driver for bench/placement.py (libsqlite3-sys's bundled amalgamation has no
 * shell): an in-memory database, N rows inserted through a prepared statement, an index, and a
 * few queries (aggregate, LIKE scan, ordered join); prints the queries' results.
 * `sqlite_main [rows]`. */
#include <stdio.h>
#include <stdlib.h>

#include "sqlite3.h"
#include "main_cpu.h"

static int check(sqlite3 *db, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
    return rc;
}

static void query(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    check(db, sqlite3_prepare_v2(db, sql, -1, &st, NULL), sql);
    while (check(db, sqlite3_step(st), sql) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++)
            printf("%s%s", i ? "|" : "", (const char *)sqlite3_column_text(st, i));
        printf("\n");
    }
    sqlite3_finalize(st);
}

int main(int argc, char **argv)
{
    main_cpu_start();
    int rows = argc > 1 ? atoi(argv[1]) : 20000;
    sqlite3 *db;
    check(NULL, sqlite3_open(":memory:", &db), "open");
    check(db, sqlite3_exec(db,
                           "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, kind INTEGER,"
                           " price REAL);"
                           "CREATE TABLE kind(id INTEGER PRIMARY KEY, label TEXT);"
                           "BEGIN;",
                           NULL, NULL, NULL),
          "schema");
    for (int k = 0; k < 16; k++) {
        char sql[96];
        snprintf(sql, sizeof sql, "INSERT INTO kind VALUES(%d, 'kind-%02d');", k, k);
        check(db, sqlite3_exec(db, sql, NULL, NULL, NULL), "kind");
    }
    sqlite3_stmt *ins;
    check(db, sqlite3_prepare_v2(db, "INSERT INTO item(name, kind, price) VALUES(?, ?, ?)", -1,
                                 &ins, NULL),
          "prepare");
    unsigned x = 2026;
    for (int i = 0; i < rows; i++) {
        char name[32];
        x = x * 1103515245u + 12345u;
        snprintf(name, sizeof name, "item-%u", (x >> 8) % 100000);
        sqlite3_bind_text(ins, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(ins, 2, (int)((x >> 4) % 16));
        sqlite3_bind_double(ins, 3, (double)((x >> 12) % 10000) / 100.0);
        check(db, sqlite3_step(ins), "insert");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    check(db, sqlite3_exec(db, "COMMIT; CREATE INDEX item_name ON item(name);", NULL, NULL, NULL),
          "index");
    query(db, "SELECT count(*), round(sum(price), 2), max(name) FROM item");
    query(db, "SELECT count(*) FROM item WHERE name LIKE '%77%'");
    query(db, "SELECT k.label, count(*), round(avg(i.price), 2) FROM item i JOIN kind k"
              " ON i.kind = k.id GROUP BY k.label ORDER BY 2 DESC LIMIT 3");
    query(db, "SELECT name FROM item ORDER BY name DESC LIMIT 1");
    sqlite3_close(db);
    main_cpu_end();
    return 0;
}
