import { useState } from 'preact/hooks';
import { FieldError, invalid, Table } from '../admin/ui';
import { size, t } from '../i18n';
import { readHead, type CsvHead } from './csv';

/** The largest list the service takes (256 MB). */
const MAX_BYTES = 256 * 1024 * 1024;

const SEPARATORS: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab' };

/**
 * The list: a CSV file chosen, its header and first rows read here (the
 * file is sent whole only when the campaign is created).
 */
export function ListFile({
  head,
  onRead,
  error,
}: {
  head: CsvHead | null;
  onRead: (file: File | null, head: CsvHead | null) => void;
  error: string | undefined;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const choose = (chosen: File | undefined) => {
    setProblem(null);
    setFile(chosen ?? null);
    onRead(null, null);
    if (!chosen) return;
    if (chosen.size > MAX_BYTES) {
      setProblem(t('campaigns.fileTooLarge', { size: size(MAX_BYTES) }));
      return;
    }
    readHead(chosen).then(
      (read) => onRead(chosen, read),
      () => setProblem(t('campaigns.fileUnreadable')),
    );
  };
  const shown = problem ?? error;
  return (
    <section class="panel form" aria-labelledby="step-list">
      <h2 id="step-list">{t('campaigns.stepList')}</h2>
      <label>
        {t('campaigns.file')}
        <input
          type="file"
          accept=".csv,.txt,text/csv,text/plain"
          required
          onChange={(e) => choose(e.currentTarget.files?.[0])}
          {...invalid('campaign-file', shown ?? undefined)}
        />
      </label>
      <p class="muted hint">{t('campaigns.fileHint')}</p>
      <FieldError id="campaign-file" error={shown ?? undefined} />
      {file && head && (
        <>
          <p role="status">
            {t('campaigns.fileRead', {
              name: file.name,
              size: size(file.size),
              separator: t(`campaigns.separators.${SEPARATORS[head.delimiter] ?? 'comma'}`),
              count: head.columns.length,
            })}
          </p>
          <Table
            columns={head.columns}
            items={head.rows}
            empty={t('campaigns.noRows')}
            label={t('campaigns.firstRows')}
            row={(row) => (
              <tr key={head.rows.indexOf(row)}>
                {head.columns.map((column) => (
                  <td key={column}>{row[column]}</td>
                ))}
              </tr>
            )}
          />
        </>
      )}
    </section>
  );
}
