import { FieldError, invalid } from '../admin/ui';
import { t } from '../i18n';
import type { Variable } from '../templates/catalogue';

/** Which column of the list fills what: the number, the user id, each variable of the template. */
export interface Mapping {
  to: string;
  recipient: string;
  parameters: Record<string, string>;
}

const NUMBER_COLUMN =
  /^(to|phone|phone_?number|number|mobile|telefone|celular|whatsapp|n[uú]mero|fone)$/i;
const USER_COLUMN = /^(recipient|user_?id|bsuid|usu[aá]rio|id_?usu[aá]rio)$/i;

/** A first guess from the header: the columns named as such lists usually name them. */
export function guessMapping(columns: string[], variables: Variable[], was?: Mapping): Mapping {
  const kept = (column: string | undefined) =>
    column && columns.includes(column) ? column : undefined;
  // A named variable (`first_name`, `header.order`) in a column of its name; `1`, `button.0`: no guess.
  const same = (key: string) => {
    const name = key.split('.').at(-1) ?? key;
    if (/^\d+$/.test(name)) return undefined;
    return columns.find((column) => column.toLowerCase() === name.toLowerCase());
  };
  return {
    to: kept(was?.to) ?? columns.find((c) => NUMBER_COLUMN.test(c)) ?? '',
    recipient: kept(was?.recipient) ?? columns.find((c) => USER_COLUMN.test(c)) ?? '',
    parameters: Object.fromEntries(
      variables.map((v) => [v.key, kept(was?.parameters[v.key]) ?? same(v.key) ?? '']),
    ),
  };
}

function ColumnSelect({
  id,
  label,
  value,
  columns,
  required,
  none,
  error,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  columns: string[];
  required: boolean;
  none: string;
  error: string | undefined;
  onChange: (column: string) => void;
}) {
  return (
    <>
      <label>
        {label}
        <select
          value={value}
          required={required}
          onChange={(e) => onChange(e.currentTarget.value)}
          {...invalid(id, error)}
        >
          <option value="">{none}</option>
          {columns.map((column) => (
            <option key={column} value={column}>
              {column}
            </option>
          ))}
        </select>
      </label>
      <FieldError id={id} error={error} />
    </>
  );
}

/** The columns chosen for the recipients' addresses and for each of the template's variables. */
export function ColumnMapping({
  columns,
  variables,
  mapping,
  onChange,
  at,
}: {
  columns: string[];
  variables: Variable[];
  mapping: Mapping;
  onChange: (mapping: Mapping) => void;
  at: (name: string) => string | undefined;
}) {
  return (
    <>
      <fieldset>
        <legend>{t('campaigns.addresses')}</legend>
        <p class="muted hint">{t('campaigns.addressesHint')}</p>
        <ColumnSelect
          id="column-to"
          label={t('campaigns.numberColumn')}
          value={mapping.to}
          columns={columns}
          required={false}
          none={t('campaigns.noColumn')}
          error={at('to')}
          onChange={(to) => onChange({ ...mapping, to })}
        />
        <ColumnSelect
          id="column-recipient"
          label={t('campaigns.userColumn')}
          value={mapping.recipient}
          columns={columns}
          required={false}
          none={t('campaigns.noColumn')}
          error={at('recipient')}
          onChange={(recipient) => onChange({ ...mapping, recipient })}
        />
      </fieldset>
      {variables.length > 0 && (
        <fieldset>
          <legend>{t('campaigns.variables')}</legend>
          {variables.map((variable) => (
            <ColumnSelect
              key={variable.key}
              id={`column-${variable.key.replace(/\W/g, '-')}`}
              label={variable.label}
              value={mapping.parameters[variable.key] ?? ''}
              columns={columns}
              required
              none={t('campaigns.chooseColumn')}
              error={at(`param:${variable.key}`)}
              onChange={(column) =>
                onChange({
                  ...mapping,
                  parameters: { ...mapping.parameters, [variable.key]: column },
                })
              }
            />
          ))}
        </fieldset>
      )}
    </>
  );
}
