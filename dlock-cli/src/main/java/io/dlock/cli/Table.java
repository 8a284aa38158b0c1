package io.dlock.cli;

import java.io.PrintStream;
import java.util.List;

/** Prints rows as a plain text table: the first row is the header, columns padded to fit. */
final class Table {

    private Table() { }

    /**
     * Prints a table; columns of numbers (and {@code -} for none) are right-aligned.
     *
     * @param out where to print
     * @param rows the header row, then the data rows; every row has the same number of cells
     */
    static void print(PrintStream out, List<String[]> rows) {
        int columns = rows.get(0).length;
        int[] width = new int[columns];
        boolean[] numeric = new boolean[columns];
        for (int c = 0; c < columns; c++) {
            boolean anyNumber = false;
            numeric[c] = true;
            for (int r = 0; r < rows.size(); r++) {
                String cell = rows.get(r)[c];
                width[c] = Math.max(width[c], cell.length());
                if (r > 0) {
                    anyNumber |= cell.matches("-?[0-9]+");
                    numeric[c] &= cell.matches("-?[0-9]+|-");
                }
            }
            numeric[c] &= anyNumber;
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < columns; c++) {
                String cell = row[c];
                String pad = " ".repeat(width[c] - cell.length());
                if (c > 0) {
                    line.append("  ");
                }
                line.append(numeric[c] ? pad + cell : cell + (c == columns - 1 ? "" : pad));
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
