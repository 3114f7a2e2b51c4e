"""Benign code: programs that *refer* to secrets (environment variables, secret managers,
type hints, schemas, form fields, templated values) without holding one."""

from __future__ import annotations


def split(block: str) -> list[str]:
    """Snippets are separated by a line holding only `~~~`."""
    return [s.strip("\n") for s in block.split("\n~~~\n") if s.strip()]


PYTHON = split(r'''
import os

api_key = os.environ["OPENAI_API_KEY"]
client = OpenAI(api_key=api_key)
~~~
password: Optional[str] = None
token: str | None = Field(default=None, description="Bearer token, read from the environment")
~~~
class Settings(BaseSettings):
    database_password: SecretStr
    stripe_api_key: SecretStr = SecretStr("")
    jwt_secret: str = Field(..., min_length=32)
~~~
def login(username: str, password: str) -> Session:
    user = users.get(username)
    if user is None or not bcrypt.checkpw(password.encode(), user.password_hash):
        raise InvalidCredentials()
    return Session(user=user)
~~~
secret = boto3.client("secretsmanager").get_secret_value(SecretId="prod/db")["SecretString"]
creds = json.loads(secret)
conn = psycopg.connect(host=creds["host"], password=creds["password"])
~~~
token = request.headers.get("Authorization", "").removeprefix("Bearer ")
if not token:
    return jsonify(error="missing token"), 401
~~~
password = getpass.getpass("Password: ")
confirm_password = getpass.getpass("Repeat password: ")
~~~
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "PASSWORD": env("DB_PASSWORD"),
        "HOST": env("DB_HOST", default="localhost"),
    }
}
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY")
~~~
# The API key is read from ~/.config/tool/credentials; never hard-code it.
api_key = load_credentials(profile)["api_key"]
~~~
@pytest.fixture
def client(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "dummy")
    return GitHub(token=os.environ["GITHUB_TOKEN"])
~~~
password_min_length = 12
password_policy = PasswordPolicy(min_length=password_min_length, require_symbols=True)
~~~
max_tokens = 4096
tokens = tokenizer.encode(prompt)
if len(tokens) > max_tokens:
    tokens = tokens[:max_tokens]
~~~
token_url = "https://oauth2.googleapis.com/token"
auth_url = "https://accounts.google.com/o/oauth2/v2/auth"
~~~
hashed = hashlib.sha256(password.encode("utf-8")).hexdigest()
~~~
vault = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
secret = vault.secrets.kv.v2.read_secret_version(path="myapp/config")
~~~
def rotate_secret(secret_id: str) -> None:
    """Ask Secrets Manager to rotate; the new value never passes through this process."""
    sm.rotate_secret(SecretId=secret_id)
~~~
next_token = response.get("NextToken")
while next_token:
    response = client.list_secrets(NextToken=next_token)
    next_token = response.get("NextToken")
~~~
app.config["SECRET_KEY"] = os.urandom(32)
~~~
tokenizer.pad_token = tokenizer.eos_token
tokenizer.bos_token_id = 1
~~~
if not re.fullmatch(r"[A-Za-z0-9]{32}", api_key):
    raise ValueError("api_key must be 32 alphanumeric characters")
~~~
session = boto3.Session(profile_name="prod")
credentials = session.get_credentials()
~~~
kwargs = {"password": password, "username": username}
resp = requests.post(LOGIN_URL, data=kwargs, timeout=10)
''')

JAVASCRIPT = split(r'''
const apiKey = process.env.OPENAI_API_KEY;
if (!apiKey) throw new Error("OPENAI_API_KEY is not set");
~~~
interface Credentials {
  username: string;
  password: string;
  apiKey?: string;
}
~~~
type Config = {
  token: string | undefined;
  secret: Secret<string>;
};
~~~
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!, { apiVersion: "2024-06-20" });
~~~
export async function getSecret(name: string): Promise<string> {
  const out = await sm.send(new GetSecretValueCommand({ SecretId: name }));
  return out.SecretString ?? "";
}
~~~
const password = document.querySelector<HTMLInputElement>("#password")!.value;
~~~
<input type="password" name="password" placeholder="Password" autocomplete="current-password" />
~~~
headers: {
  Authorization: `Bearer ${token}`,
  "Content-Type": "application/json",
},
~~~
const { data: session } = useSession();
if (!session?.accessToken) return <SignIn />;
~~~
passport.use(new LocalStrategy(async (username, password, done) => {
  const user = await Users.findOne({ username });
  if (!user || !(await user.verifyPassword(password))) return done(null, false);
  return done(null, user);
}));
~~~
const secret = config.get("jwt.secret");
const token = jwt.sign({ sub: user.id }, secret, { expiresIn: "1h" });
~~~
module.exports = {
  password: process.env.DB_PASSWORD,
  host: process.env.DB_HOST || "localhost",
};
~~~
const schema = z.object({
  email: z.string().email(),
  password: z.string().min(12, "Password must be at least 12 characters"),
});
~~~
if (password.length < 12) errors.password = "too short";
~~~
app.use(session({ secret: process.env.SESSION_SECRET, resave: false, saveUninitialized: false }));
~~~
const token = localStorage.getItem("token");
~~~
export const handler = async () => {
  const apiKey = await ssm.getParameter({ Name: "/prod/api-key", WithDecryption: true });
  return apiKey.Parameter?.Value;
};
~~~
const url = `https://api.github.com/repos/${owner}/${repo}`;
const res = await fetch(url, { headers: { Authorization: `token ${process.env.GITHUB_TOKEN}` } });
~~~
expect(screen.getByLabelText("Password")).toBeInTheDocument();
~~~
const secretName = "prod/payments/stripe";
const secretArn = `arn:aws:secretsmanager:${region}:${account}:secret:${secretName}`;
''')

GO = split(r'''
token := os.Getenv("GITHUB_TOKEN")
if token == "" {
	log.Fatal("GITHUB_TOKEN is required")
}
~~~
type Config struct {
	Password string `json:"password" env:"DB_PASSWORD"`
	APIKey   string `json:"api_key" env:"API_KEY"`
}
~~~
password, err := term.ReadPassword(int(os.Stdin.Fd()))
if err != nil {
	return err
}
~~~
secret, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("prod/db")})
~~~
cfg := &oauth2.Config{
	ClientID:     os.Getenv("CLIENT_ID"),
	ClientSecret: os.Getenv("CLIENT_SECRET"),
	Endpoint:     github.Endpoint,
}
~~~
func hashPassword(password string) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(b), err
}
~~~
req.Header.Set("Authorization", "Bearer "+token)
~~~
var ErrInvalidToken = errors.New("token is invalid or expired")
~~~
dsn := fmt.Sprintf("postgres://%s:%s@%s/%s", user, password, host, db)
~~~
key, err := ssh.ParsePrivateKey(keyBytes)
if err != nil {
	return fmt.Errorf("parse private key: %w", err)
}
~~~
flag.StringVar(&apiKey, "api-key", "", "API key (or set API_KEY)")
~~~
apiKey := viper.GetString("datadog.api_key")
~~~
if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
	return ErrBadSignature
}
~~~
secretRef := corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db-credentials"}, Key: "password"}
~~~
tok, err := jwt.ParseWithClaims(raw, &Claims{}, func(t *jwt.Token) (any, error) { return signingKey, nil })
''')

JAVA = split(r'''
String password = System.getenv("DB_PASSWORD");
String url = "jdbc:postgresql://db.internal:5432/app";
Connection conn = DriverManager.getConnection(url, "app", password);
~~~
@Value("${stripe.api-key}")
private String stripeApiKey;
~~~
public record LoginRequest(String username, char[] password) {}
~~~
spring.datasource.password=${DB_PASSWORD}
spring.datasource.username=${DB_USER:app}
~~~
private static final String TOKEN_HEADER = "Authorization";
private static final String TOKEN_PREFIX = "Bearer ";
~~~
if (!passwordEncoder.matches(rawPassword, user.getPasswordHash())) {
    throw new BadCredentialsException("Invalid username or password");
}
~~~
SecretsManagerClient sm = SecretsManagerClient.create();
String secret = sm.getSecretValue(r -> r.secretId("prod/api")).secretString();
~~~
@NotBlank
@Size(min = 12, max = 128)
private String password;
~~~
KeyStore ks = KeyStore.getInstance("PKCS12");
ks.load(new FileInputStream(keystorePath), keystorePassword.toCharArray());
~~~
String apiKey = Objects.requireNonNull(config.getProperty("api.key"), "api.key missing");
~~~
public interface TokenStore { Optional<String> find(String userId); void revoke(String token); }
~~~
var credentials = new UsernamePasswordCredentials(user, System.getProperty("proxy.password"));
''')

RUST = split(r'''
let token = std::env::var("GITHUB_TOKEN").expect("GITHUB_TOKEN must be set");
~~~
#[derive(Deserialize)]
struct Config {
    password: SecretString,
    api_key: Option<String>,
}
~~~
let password = rpassword::prompt_password("Password: ")?;
~~~
let secret = client.get_secret_value().secret_id("prod/db").send().await?;
let value = secret.secret_string().unwrap_or_default();
~~~
fn verify(password: &str, hash: &str) -> bool {
    argon2::verify_encoded(hash, password.as_bytes()).unwrap_or(false)
}
~~~
let api_key: String = env::var("API_KEY").context("API_KEY not set")?;
~~~
pub struct Token(pub String);
impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str("Token(***)") }
}
~~~
let auth = format!("Bearer {}", token);
req.headers_mut().insert(AUTHORIZATION, auth.parse()?);
~~~
const MAX_TOKENS: usize = 8192;
~~~
let key = Key::<Aes256Gcm>::from_slice(&secret_key_bytes);
''')

RUBY = split(r'''
api_key = ENV.fetch("OPENAI_API_KEY")
~~~
Rails.application.credentials.dig(:aws, :secret_access_key)
~~~
validates :password, length: { minimum: 12 }, confirmation: true
~~~
has_secure_password
attr_accessor :password_confirmation
~~~
config.secret_key_base = ENV["SECRET_KEY_BASE"]
~~~
token = request.headers["Authorization"]&.delete_prefix("Bearer ")
~~~
def authenticate(email, password)
  user = User.find_by(email: email)
  user&.authenticate(password)
end
~~~
production:
  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>
  password: <%= ENV.fetch("DB_PASSWORD") %>
~~~
client = Octokit::Client.new(access_token: ENV["GITHUB_TOKEN"])
~~~
Stripe.api_key = Rails.application.credentials.stripe[:secret_key]
''')

CSHARP = split(r'''
var apiKey = Environment.GetEnvironmentVariable("API_KEY")
    ?? throw new InvalidOperationException("API_KEY not set");
~~~
public class LoginModel
{
    [Required, DataType(DataType.Password)]
    public string Password { get; set; } = string.Empty;
}
~~~
var secret = await secretClient.GetSecretAsync("db-password");
var connectionString = builder.Configuration.GetConnectionString("Default");
~~~
builder.Configuration.AddAzureKeyVault(new Uri(vaultUri), new DefaultAzureCredential());
~~~
"ConnectionStrings": { "Default": "Server=localhost;Database=app;User Id=app;Password=${DB_PASSWORD};" }
~~~
string token = context.Request.Headers["Authorization"].ToString().Replace("Bearer ", "");
~~~
if (!BCrypt.Net.BCrypt.Verify(request.Password, user.PasswordHash)) return Unauthorized();
~~~
services.Configure<JwtOptions>(configuration.GetSection("Jwt"));
var signingKey = new SymmetricSecurityKey(Encoding.UTF8.GetBytes(options.SigningKey));
''')

SHELL = split(r'''
export GITHUB_TOKEN="$(gh auth token)"
~~~
export AWS_SECRET_ACCESS_KEY=$(aws configure get aws_secret_access_key --profile prod)
~~~
read -rsp "Password: " PASSWORD
~~~
echo "$DOCKER_PASSWORD" | docker login -u "$DOCKER_USERNAME" --password-stdin
~~~
mysql -h db.internal -u root -p orders < dump.sql
~~~
psql "postgresql://app@db.internal:5432/app" -c "select 1"
~~~
curl -H "Authorization: Bearer $TOKEN" https://api.internal/v1/health
~~~
curl -u "$JENKINS_USER:$JENKINS_TOKEN" https://jenkins.internal/api/json
~~~
aws secretsmanager get-secret-value --secret-id prod/db --query SecretString --output text
~~~
kubectl create secret generic db-credentials --from-literal=username=app --from-file=password=./password.txt
~~~
vault kv get -field=password secret/myapp/db
~~~
ssh -p 2222 -i ~/.ssh/id_ed25519 deploy@bastion.internal
~~~
docker run -p 8080:80 -e API_KEY="${API_KEY}" myapp:latest
~~~
redis-cli -h cache.internal --askpass ping
~~~
openssl req -new -newkey rsa:4096 -nodes -keyout server.key -out server.csr -passout env:KEY_PASS
~~~
gh secret set NPM_TOKEN < token.txt
~~~
PGPASSWORD="$(cat /run/secrets/pg_password)" pg_dump -h db -U app app > app.sql
''')

SNIPPETS = {
    "code_python": PYTHON,
    "code_javascript": JAVASCRIPT,
    "code_go": GO,
    "code_java": JAVA,
    "code_rust": RUST,
    "code_ruby": RUBY,
    "code_csharp": CSHARP,
    "code_shell": SHELL,
}
