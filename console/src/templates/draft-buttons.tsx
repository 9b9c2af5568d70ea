import { FieldError, invalid } from '../admin/ui';
import { t } from '../i18n';
import { SHOWN_VARIABLES } from './catalogue';

/** A button of a new template: a quick reply, or a URL (which may end with {{1}}). */
export interface DraftButton {
  type: 'QUICK_REPLY' | 'URL';
  text: string;
  url: string;
  /** A URL's variable: the example value of {{1}}. */
  example: string;
}

/** The most buttons a template may carry. */
const MAX_BUTTONS = 10;

/** The buttons of a new template: added, edited and removed; each shows what the API refused of it. */
export function ButtonsField({
  buttons,
  onChange,
  at,
}: {
  buttons: DraftButton[];
  onChange: (buttons: DraftButton[]) => void;
  at: (name: string) => string | undefined;
}) {
  const change = (index: number, patch: Partial<DraftButton>) =>
    onChange(buttons.map((button, i) => (i === index ? { ...button, ...patch } : button)));
  const add = (type: DraftButton['type']) =>
    onChange([...buttons, { type, text: '', url: type === 'URL' ? 'https://' : '', example: '' }]);
  return (
    <fieldset {...invalid('template-buttons', at('buttons'))}>
      <legend>{t('templates.buttons')}</legend>
      {buttons.map((button, i) => {
        const id = `template-button-${i}`;
        const position = i + 1;
        const kind = t(`templates.buttonTypes.${button.type}`);
        return (
          <fieldset key={i} class="draft-button">
            <legend>{t('templates.buttonNamed', { position, kind })}</legend>
            <label>
              {t('templates.buttonText')}
              <input
                value={button.text}
                required
                maxLength={25}
                onInput={(e) => change(i, { text: e.currentTarget.value })}
                {...invalid(`${id}-text`, at(`button${i}.text`))}
              />
            </label>
            <FieldError id={`${id}-text`} error={at(`button${i}.text`)} />
            {button.type === 'URL' && (
              <>
                <label>
                  {t('templates.buttonUrl')}
                  <input
                    type="url"
                    value={button.url}
                    required
                    onInput={(e) => change(i, { url: e.currentTarget.value })}
                    {...invalid(`${id}-url`, at(`button${i}.url`))}
                  />
                </label>
                <p class="muted hint">{t('templates.urlHint', SHOWN_VARIABLES)}</p>
                <FieldError id={`${id}-url`} error={at(`button${i}.url`)} />
                {/\{\{\s*1\s*\}\}/.test(button.url) && (
                  <>
                    <label>
                      {t('templates.exampleOf', { variable: '{{1}}' })}
                      <input
                        value={button.example}
                        required
                        onInput={(e) => change(i, { example: e.currentTarget.value })}
                        {...invalid(`${id}-example`, at(`button${i}.example`))}
                      />
                    </label>
                    <FieldError id={`${id}-example`} error={at(`button${i}.example`)} />
                  </>
                )}
              </>
            )}
            <button
              type="button"
              class="secondary"
              onClick={() => onChange(buttons.filter((_, j) => j !== i))}
            >
              {t('templates.removeButton', { position })}
            </button>
          </fieldset>
        );
      })}
      {buttons.length < MAX_BUTTONS && (
        <div class="row">
          <button type="button" class="secondary" onClick={() => add('QUICK_REPLY')}>
            {t('templates.addQuickReply')}
          </button>
          <button type="button" class="secondary" onClick={() => add('URL')}>
            {t('templates.addUrl')}
          </button>
        </div>
      )}
      <FieldError id="template-buttons" error={at('buttons')} />
    </fieldset>
  );
}
